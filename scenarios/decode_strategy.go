package scenarios

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/spec"
)

// strategyName reads a strategy's name and description: a name that is
// unique, printable and short (NameProblem), a description of printable
// text.
func (d *decoder) strategyName(t *table) (name, description string) {
	if n, ok := t.str("name"); ok {
		name = n
		switch first, dup := d.strategies[name]; {
		case strings.TrimSpace(name) == "":
			t.add("name", "is empty; name the strategy, like name = \"bounded-8\"")
		case NameProblem("strategy", name) != "":
			t.add("name", "%s", NameProblem("strategy", name))
		case dup:
			t.add("name", "strategy %q is already defined at line %d; give each strategy a unique name", name, d.pos.lookup(first).line)
		default:
			d.strategies[name] = t.key("name")
		}
	} else if !t.has("name") {
		d.add(t.path, "missing name; name the strategy, like name = \"bounded-8\"")
	}
	if desc, ok := t.str("description"); ok {
		if msg := TextProblem(desc); msg != "" {
			t.add("description", "%s", msg)
		}
		description = desc
	}
	return name, description
}

// decodeStrategy reads one [[strategy]] table; its defaults are those of a
// strategy that sets nothing.
func (d *decoder) decodeStrategy(sc *Scenario, t *table) Strategy {
	defer t.finish()
	s := Strategy{Headroom: 1, Retry: defaultRetry(), SerializeWrites: true,
		FanOutMode: sched.FanOutBatch, Join: sched.JoinPartial, CancelAt: CancelAtTransport, Quota: Quota{Mode: QuotaFull}}
	s.Name, s.Description = d.strategyName(t)
	if n, ok := t.integer("max_in_flight", 0, MaxCap, whyCap); ok {
		s.MaxInFlight = int(n)
	}
	if pt := t.sub("max_in_flight_per_service"); pt != nil {
		s.MaxInFlightPerService = map[string]int{}
		for _, name := range pt.keys() {
			if n, ok := pt.integer(name, 1, MaxCap, whyCap); ok {
				s.MaxInFlightPerService[name] = int(n)
			}
			d.checkService(sc, pt.key(name), name)
		}
	}
	s.TokenBucket, _ = t.boolean("token_bucket")
	decodeHeadroom(t, &s)
	if rt := t.sub("retry"); rt != nil {
		s.Retry = d.decodeRetry(rt)
	}
	if qt := t.sub("quota"); qt != nil {
		d.decodeQuota(sc, &s, qt)
	}
	if b, ok := t.boolean("serialize_writes"); ok {
		s.SerializeWrites = b
	}
	s.KeepSlotDuringBackoff, _ = t.boolean("keep_slot_during_backoff")
	s.PauseOnRetryAfter, _ = t.boolean("pause_on_retry_after")
	if at := t.sub("adaptive"); at != nil {
		s.Adaptive = d.decodeAdaptive(sc, at)
	}
	if bt := t.sub("retry_budget"); bt != nil {
		s.RetryBudget = d.decodeRetryBudget(bt)
	}
	if b, ok := t.boolean("header_sync"); ok && b {
		s.HeaderSync = true
		if !s.TokenBucket {
			t.add("header_sync", "lowers the token buckets, so it only applies with token_bucket = true; add that or remove header_sync")
		}
	}
	if b, _ := t.boolean("recommend"); b {
		s.Recommend = true
		if i := slices.IndexFunc(sc.Strategies, func(o Strategy) bool { return o.Recommend }); i >= 0 {
			t.add("recommend", "strategy %q (line %d) is already the one recommend tunes; mark only one strategy", sc.Strategies[i].Name, d.pos.lookup(d.strategies[sc.Strategies[i].Name]).line)
		}
	}
	if n, ok := t.integer("fan_out", 0, MaxCap, whyCap); ok {
		s.FanOut = int(n)
	}
	s.FanOutMode = named(t, "fan_out_mode", sched.FanOutBatch, sched.FanOutModes())
	if t.has("fan_out_mode") && s.FanOut == 0 {
		t.add("fan_out_mode", "only applies with fan_out > 0; add fan_out = N or remove fan_out_mode")
	}
	s.Join = named(t, "join", sched.JoinPartial, sched.JoinModes())
	d.decodeBatchTurns(sc, t, &s)
	if jt := t.sub("progressive_join"); jt != nil {
		s.ProgressiveJoin = d.decodeProgressiveJoin(sc, jt)
	}
	decodeTimeouts(t, &s)
	if t.has("fall_back_after") {
		f := fallBackAfter(t, "fall_back_after")
		s.FallBackAfter = &f
		if len(sc.Routes) == 0 {
			t.add("fall_back_after", "only applies to routes; add a [routes.NAME] table whose deployments serve a tool, or remove fall_back_after")
		}
	}
	s.TokenBudget, _ = t.integer("token_budget", 0, MaxTokenBudget, whyTokenBudget)
	if n, ok := t.integer("attempt_budget", 0, MaxCap, whyCap); ok {
		s.AttemptBudget = int(n)
	}
	if n, ok := t.integer("max_queued", 0, MaxCap, whyCap); ok {
		s.MaxQueued = int(n)
	}
	s.CancelAt = enum(t, "cancel_at", CancelAtTransport, CancelAtTransport, CancelAtReader)
	s.Priority = d.decodePriority(sc, t)
	s.Hedge = d.decodeHedge(sc, t)
	return s
}

// decodeHeadroom reads headroom: a fraction of the published limits in
// [MinHeadroom, 1], with token_bucket = true.
func decodeHeadroom(t *table, s *Strategy) {
	if h, ok := t.positive("headroom", math.MaxFloat64, ""); ok {
		s.Headroom = h
		switch {
		case h > 1:
			t.add("headroom", "is %s; it is the fraction of the published limits to use, so keep it in (0, 1]", spec.ShowAmount(h))
		case h < MinHeadroom:
			t.add("headroom", "is %s; it must be at least %s: below 1%% of the published limits the buckets barely refill, and their waits overflow", spec.ShowAmount(h), spec.ShowAmount(MinHeadroom))
		case !s.TokenBucket:
			t.add("headroom", "only applies with token_bucket = true; add that or remove headroom")
		}
	}
}

// decodeTimeouts reads attempt_timeout, call_timeout and turn_timeout, each
// no longer than the one after it.
func decodeTimeouts(t *table, s *Strategy) {
	s.AttemptTimeout, _ = t.duration("attempt_timeout")
	s.CallTimeout, _ = t.duration("call_timeout")
	s.TurnTimeout, _ = t.duration("turn_timeout")
	if s.AttemptTimeout > 0 && s.CallTimeout > 0 && s.AttemptTimeout > s.CallTimeout {
		t.add("attempt_timeout", "attempt_timeout (%s) is longer than call_timeout (%s); an attempt cannot outlive its call", s.AttemptTimeout, s.CallTimeout)
	}
	if s.CallTimeout > 0 && s.TurnTimeout > 0 && s.CallTimeout > s.TurnTimeout {
		t.add("call_timeout", "call_timeout (%s) is longer than turn_timeout (%s); a call cannot outlive its turn", s.CallTimeout, s.TurnTimeout)
	}
}

// decodeAdaptive reads a strategy's adaptive concurrency limit.
func (d *decoder) decodeAdaptive(sc *Scenario, t *table) *Adaptive {
	defer t.finish()
	a := &Adaptive{}
	if !t.has("algorithm") {
		t.add("algorithm", "is required; write algorithm = \"aimd\" or algorithm = \"gradient\"")
	}
	a.Algorithm = named(t, "algorithm", sched.AlgorithmAIMD, sched.Algorithms())
	whole := func(k string, lo int64) int {
		n, _ := t.integer(k, lo, MaxCap, whyCap)
		return int(n)
	}
	a.Initial, a.Min, a.Max = whole("initial", 1), whole("min", 1), whole("max", 1)
	if a.Min > 0 && a.Max > 0 && a.Min > a.Max {
		t.add("min", "is %d, above max (%d); the limit must fit between them", a.Min, a.Max)
	}
	if f, ok := t.fraction("decrease"); ok {
		if f == 0 || f == 1 {
			t.add("decrease", "is %s; it multiplies the limit on a 429, so keep it strictly between 0 and 1", spec.ShowAmount(f))
		}
		a.Decrease = f
	}
	if f, ok := t.fraction("smoothing"); ok {
		if f == 0 {
			t.add("smoothing", "is 0; it is the weight of each new estimate, so keep it in (0, 1]")
		}
		a.Smoothing = f
	}
	if f, ok := t.positive("tolerance", 100, "a latency ratio"); ok {
		if f < 1 {
			t.add("tolerance", "is %s; it is the latency ratio tolerated, so it must be at least 1", spec.ShowAmount(f))
		}
		a.Tolerance = f
	}
	a.LongWindow = whole("long_window", 1)
	a.QueueSize, _ = t.positive("queue_size", MaxCap, whyCap)
	if a.Algorithm == sched.AlgorithmAIMD {
		for _, k := range []string{"smoothing", "tolerance", "long_window", "queue_size"} {
			if t.has(k) {
				t.add(k, "only applies with algorithm = \"gradient\"; remove it or change the algorithm")
			}
		}
	}
	if names, ok := t.strings("services"); ok {
		a.Services = names
		for i, name := range names {
			d.checkService(sc, t.key("services")+"["+strconv.Itoa(i)+"]", name)
		}
	}
	return a
}

// decodeRetryBudget reads a strategy's per-service retry budget.
func (d *decoder) decodeRetryBudget(t *table) *RetryBudget {
	defer t.finish()
	nonNegative := func(k string) float64 {
		v, ok := t.get(k)
		if !ok {
			return 0
		}
		f, ok := t.d.number(t.key(k), v)
		switch {
		case !ok:
		case f < 0 || f > MaxRetryBudget:
			t.add(k, "is %s; it must be between 0 and %s", spec.ShowAmount(f), spec.ShowAmount(MaxRetryBudget))
		default:
			return f
		}
		return 0
	}
	b := &RetryBudget{Ratio: nonNegative("ratio"), MinPerSecond: nonNegative("min_per_s"), Max: nonNegative("max")}
	if !t.has("ratio") && !t.has("min_per_s") {
		d.add(t.path, "needs ratio or min_per_s; write retry_budget = { ratio = 0.1, min_per_s = 1 }")
	}
	if t.has("max") && b.Max > 0 && b.Max < 1 {
		t.add("max", "is %s; a budget holding less than one retry never allows one, so make it at least 1", spec.ShowAmount(b.Max))
	}
	return b
}

// defaultRetry is the policy of a strategy without a retry table: one
// attempt, no retries.
func defaultRetry() Retry {
	return Retry{Backoff: sched.BackoffNone, HonorRetryAfter: true, OverMaxRetryAfter: sched.RetryAfterClamp}
}

func (d *decoder) decodeRetry(t *table) Retry {
	defer t.finish()
	r := defaultRetry()
	r.Backoff = named(t, "backoff", sched.BackoffNone, sched.Backoffs())
	r.Base, _ = t.duration("base")
	if r.Base > 0 && r.Base < MinBackoffBase {
		t.add("base", "is %v; it must be 0 or at least %v: shorter backoff steps only spin", r.Base, MinBackoffBase)
	}
	r.Cap, _ = t.duration("cap")
	if n, ok := t.integer("attempts", 1, MaxAttempts, "attempts per call, first included"); ok {
		r.Attempts = int(n)
	}
	r.Budget, _ = t.duration("budget")
	if h, ok := t.boolean("honor_retry_after"); ok {
		r.HonorRetryAfter = h
	}
	r.RetryAfterJitter, _ = t.duration("retry_after_jitter")
	r.MaxRetryAfter, _ = t.duration("max_retry_after")
	r.OverMaxRetryAfter = named(t, "over_max_retry_after", sched.RetryAfterClamp, sched.OverMaxRetryAfters())
	if r.Backoff != sched.BackoffNone && r.Base == 0 && t.has("backoff") {
		t.add("backoff", "backoff = %q needs base, the first delay, like base = \"500ms\"", r.Backoff)
	}
	if r.Cap > 0 && r.Cap < r.Base {
		t.add("cap", "cap (%s) is below base (%s); raise cap or lower base", r.Cap, r.Base)
	}
	if t.has("retry_after_jitter") && !r.HonorRetryAfter {
		t.add("retry_after_jitter", "has no effect with honor_retry_after = false; remove one of them")
	}
	return r
}

// decodeProgressiveJoin reads a strategy's progressive_join: first (a
// whole number ≥ 1) or share (in (0, 1]), not both, and late ("fold" or
// "drop"), on a workload whose turns make tool calls.
func (d *decoder) decodeProgressiveJoin(sc *Scenario, t *table) *ProgressiveJoin {
	defer t.finish()
	j := &ProgressiveJoin{}
	if n, ok := t.integer("first", 1, MaxCallsPerTurn, "the most calls one turn can make"); ok {
		j.First = int(n)
	}
	if f, ok := t.fraction("share"); ok {
		if f == 0 {
			t.add("share", "is 0; the turn would move on before any call answered: make it above 0, up to 1")
		}
		j.Share = f
	}
	switch {
	case t.has("first") && t.has("share"):
		t.add("share", "and first both say when the turn moves on; keep one of them")
	case !t.has("first") && !t.has("share"):
		d.add(t.path, "needs first or share; write progressive_join = { first = 3 } or { share = 0.8 }")
	}
	j.Late = enum(t, "late", JoinLateFold, JoinLateFold, JoinLateDrop)
	if len(sc.Workload.Calls) == 0 {
		d.add(t.path, "needs a workload whose turns make tool calls (workload.calls): it joins a turn's tool calls")
	}
	return j
}

// decodeBatchTurns reads batch_turns: a whole number ≥ 1 whose wide turns
// still fit MaxCallsPerTurn, on a workload whose turns make tool calls.
func (d *decoder) decodeBatchTurns(sc *Scenario, t *table, s *Strategy) {
	n, ok := t.integer("batch_turns", 1, MaxCallsPerTurn, "the most calls one turn can make")
	if !ok || n == 1 {
		return
	}
	w := &sc.Workload
	calls := callsUpper(nil, w.Calls)
	switch {
	case len(w.Calls) == 0:
		t.add("batch_turns", "needs a workload whose turns make tool calls (workload.calls): it merges turns' tool calls into one model turn")
	case calls*float64(n)+callsUpper(w.LLM, nil) > MaxCallsPerTurn:
		t.add("batch_turns", "makes a turn of up to %s calls (%d × %s); it must make at most %d, the most calls one turn can make", spec.ShowAmount(calls*float64(n)), n, spec.ShowAmount(calls), MaxCallsPerTurn)
	default:
		s.BatchTurns = int(n)
	}
}
