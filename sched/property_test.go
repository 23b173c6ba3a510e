package sched

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// TestProperties checks the scheduler's invariants over random call sets,
// caps, buckets and outcomes: one subtest per seed (rerun one with
// -run 'TestProperties/seed=N'), its draws logged when it fails.
func TestProperties(t *testing.T) {
	forSeeds(t, propertyChecks, func(rt *testing.T, g *draws) { checkProperties(rt, g, false) })
}

// checkProperties runs one drawn case and checks every invariant; hedged
// gives every case a hedge policy and makes most calls idempotent reads.
func checkProperties(rt *testing.T, g *draws, hedged bool) {
	services := []string{"a", "b"}
	cfg := drawConfig(g, services)
	cs := drawCalls(g, services)
	drawPriorities(g, &cfg, cs)
	drawHedge(g, &cfg, cs, hedged)
	svcPeak := map[string]int{}
	svcNow := map[string]int{}
	cfg.Hook = func(e Event) {
		switch e.Kind {
		case EventStarted:
			svcNow[e.Service]++
			svcPeak[e.Service] = max(svcPeak[e.Service], svcNow[e.Service])
		case EventFinished, EventCancelled:
			svcNow[e.Service]--
		}
	}
	d := newDriver(rt, cfg, drawExecutor(g, cfg))
	d.tagValues, d.late = true, true
	turns := runInTurns(g, d, cs)

	checkResults(rt, d, len(cs), turns)
	checkCaps(rt, d, cfg, services, svcPeak)
	checkRetryBudgets(rt, d, cfg, cs)
	checkBuckets(rt, d, cfg, services)
	checkDependencies(rt, d, cs)
	checkHedges(rt, d, cfg, services)
}

// drawConfig draws a Config with both services: caps, buckets, retries,
// timeouts, budgets, retry budgets and adaptive limits.
func drawConfig(g *draws, services []string) Config {
	cfg := Config{
		MaxInFlight:           g.intRange("global cap", 0, 6),
		KeepSlotDuringBackoff: g.bool("keep slot"),
		FanOut:                g.intRange("fan-out", 0, 5),
		Retry: RetryPolicy{
			Backoff:          Backoff(g.intRange("backoff", 0, 5)),
			Base:             time.Duration(g.intRange("base ms", 0, 500)) * time.Millisecond,
			Cap:              2 * time.Second,
			MaxAttempts:      g.intRange("attempts", 1, 4),
			RetryAfterJitter: time.Duration(g.intRange("ra jitter ms", 0, 300)) * time.Millisecond,
		},
		AttemptTimeout:    time.Duration(g.intRange("attempt timeout s", 0, 3)) * time.Second,
		TurnAttemptBudget: g.intRange("attempt budget", 0, 12),
		TurnTokenBudget:   int64(g.intRange("token budget", 0, 20000)),
		Join:              JoinMode(g.intRange("join", 0, 2)),
		FanOutMode:        FanOutMode(g.intRange("fan-out mode", 0, 1)),
		// Deadlines and cancels end stuck calls, which would hide a
		// deadlock from the "every turn finishes" check: half the runs
		// have none.
		CallTimeout: time.Duration(g.zeroOr("call timeout s", 1, 20)) * time.Second,
		TurnTimeout: time.Duration(g.zeroOr("turn timeout s", 1, 60)) * time.Second,
		Services:    map[string]ServiceConfig{},
		// A nil Rand is seeded from crypto/rand: seed it from the draws so
		// that a failing case replays.
		Rand: rand.New(rand.NewPCG(uint64(g.intRange("jitter seed", 0, 1<<30)), 1)),
	}
	for _, s := range services {
		cfg.Services[s] = ServiceConfig{
			MaxInFlight:       g.intRange(s+" cap", 0, 4),
			RequestsPerMinute: float64(g.intRange(s+" rpm", 0, 600)),
			RequestBurst:      float64(g.intRange(s+" burst", 0, 5)),
			TokensPerMinute:   float64(g.intRange(s+" tpm", 0, 60000)),
			TokenBurst:        float64(g.intRange(s+" token burst", 0, 5000)),
			PauseOnRetryAfter: g.bool(s + " pause"),
			HeaderSync:        g.bool(s + " header sync"),
		}
		if g.bool(s + " retry budget") {
			sc := cfg.Services[s]
			sc.RetryBudget = &RetryBudget{
				Ratio:        float64(g.intRange(s+" budget ratio ×10", 0, 10)) / 10,
				MinPerSecond: float64(g.intRange(s+" budget floor/s", 0, 3)),
				Max:          float64(g.intRange(s+" budget max", 0, 5)),
			}
			cfg.Services[s] = sc
		}
		if alg := g.intRange(s+" adaptive", 0, 2); alg > 0 {
			sc := cfg.Services[s]
			sc.Adaptive = &AdaptiveConfig{
				Algorithm:  Algorithm(alg),
				Initial:    g.intRange(s+" initial", 0, 6),
				Max:        g.intRange(s+" max", 0, 8),
				LongWindow: g.intRange(s+" window", 0, 20),
			}
			cfg.Services[s] = sc
		}
	}
	return cfg
}

// drawCalls draws up to 30 calls over the services (or none), some of them
// writes, with dependencies that follow a random order of the calls.
func drawCalls(g *draws, services []string) []Call {
	n := g.intRange("calls", 1, 30)
	cs := make([]Call, n)
	for i := range cs {
		cs[i] = Call{
			ID:         fmt.Sprint("c", i),
			Service:    sampledFrom(g, "service", append(services, "")),
			Tokens:     int64(g.intRange("tokens", 0, 3000)),
			Write:      g.intRange("write", 0, 4) == 0,
			Idempotent: g.bool("idempotent"),
		}
	}
	// Dependencies follow a random order of the calls, so a call may
	// depend on one listed after it (a write on a later write), never
	// in a cycle.
	order := g.permutation("dependency order", n)
	for k := 1; k < n; k++ {
		if g.intRange("has dep", 0, 2) == 0 {
			dep := order[g.intRange("dep", 0, k-1)]
			cs[order[k]].After = append(cs[order[k]].After, fmt.Sprint("c", dep))
		}
	}
	return cs
}

// drawPriorities gives half the configs up to three priority classes with
// drawn shares, and each call a class.
func drawPriorities(g *draws, cfg *Config, cs []Call) {
	n := g.zeroOr("priority classes", 1, 3)
	left := 1.0
	for i := range n {
		s := float64(g.intRange(fmt.Sprint("share ", i), 0, 100)) / 100 * left
		cfg.Priorities = append(cfg.Priorities, PriorityClass{Name: fmt.Sprint("p", i), Share: s})
		left -= s
	}
	for i := range cs {
		cs[i].Priority = g.intRange("priority", 0, max(0, n-1))
	}
}

// drawExecutor draws the answers attempts get, in turn: a latency (below
// zero: a hang, when there is an attempt timeout to end it), a class, and
// on some what is left of the server's limits.
func drawExecutor(g *draws, cfg Config) func(c *Call, n int, now time.Duration) (time.Duration, Outcome) {
	outcomes := g.ints("outcomes", 64, 0, 9)
	latencies := g.ints("latencies ms", 64, -1, 2000)
	// Servers report what is left of their limits on some answers, as
	// little as nothing, so header sync can hold calls back.
	quotas := g.ints("remaining", 64, -1, 20)
	// Successes report a usage of some share of the estimate, so settle
	// moves calls booked behind them earlier.
	usage := g.ints("usage %", 64, -1, 100)
	k := 0
	return func(c *Call, n int, now time.Duration) (time.Duration, Outcome) {
		k++
		lat := time.Duration(latencies[k%64]) * time.Millisecond
		if lat < 0 && cfg.AttemptTimeout == 0 {
			lat = time.Second // a hang needs a timeout to end
		}
		var o Outcome
		switch outcomes[k%64] {
		case 0:
			o = Outcome{Class: ClassRateLimited, Status: 429, RetryAfter: time.Duration(k%3) * time.Second, HasRetryAfter: k%2 == 0}
		case 1:
			o = Failed(ClassTransient, errors.New("reset"))
		case 2:
			o = Failed(ClassPermanent, errors.New("bad"))
		default:
			o = Succeeded(nil)
			if u := usage[k%64]; u >= 0 {
				o.Tokens, o.HasUsage = c.Tokens*int64(u)/100, true
			}
		}
		if q := quotas[k%64]; q >= 0 {
			o.Quota.Requests = QuotaLeft{Known: true, Remaining: int64(q), Reset: time.Second}
			o.Quota.Tokens = QuotaLeft{Known: true, Remaining: int64(q) * 100, Reset: time.Second}
		}
		return lat, o
	}
}

// runInTurns submits the calls as up to three turns at drawn times,
// cancels one of them at a drawn time or none, and runs the driver until
// nothing is pending. It returns the number of turns.
func runInTurns(g *draws, d *vdriver, cs []Call) int {
	// The calls go out as up to three turns (contiguous runs of the
	// list, dependencies kept within a turn), submitted at random times,
	// so turns share caps, buckets and resources; one may be cancelled.
	n := len(cs)
	cuts := []int{0, n}
	if n > 2 {
		a := g.intRange("first cut", 1, n-1)
		cuts = []int{0, a, n}
		if a < n-1 && g.bool("second cut") {
			cuts = []int{0, a, g.intRange("cut", a+1, n-1), n}
		}
	}
	turnOf := make([]int, n)
	for t := 0; t+1 < len(cuts); t++ {
		for i := cuts[t]; i < cuts[t+1]; i++ {
			turnOf[i] = t
		}
	}
	for i := range cs {
		kept := cs[i].After[:0]
		for _, dep := range cs[i].After {
			var j int
			fmt.Sscanf(dep, "c%d", &j)
			if turnOf[j] == turnOf[i] {
				kept = append(kept, dep)
			}
		}
		cs[i].After = kept
	}
	cancelTurn := g.intRange("cancelled turn", -1, len(cuts)-2)
	cancelAt := time.Duration(g.intRange("cancel at ms", 0, 5000)) * time.Millisecond
	var ids []TurnID
	for t := 0; t+1 < len(cuts); t++ {
		at := time.Duration(0)
		if t > 0 {
			at = time.Duration(g.intRange("submit at ms", 0, 2000)) * time.Millisecond
		}
		d.run(at)
		d.now = max(d.now, at)
		ids = append(ids, d.submit(cs[cuts[t]:cuts[t+1]]...))
	}
	if g.bool("set limits") {
		lowerLimits(g, d)
	}
	if cancelTurn >= 0 {
		d.run(cancelAt)
		d.now = max(d.now, cancelAt)
		d.core.Cancel(d.now, ids[cancelTurn])
		d.drain()
	}
	d.run(1 << 62)
	return len(cuts) - 1
}

// lowerLimits lowers service a's limits at a drawn time (SetLimits), never
// above what the Config set, so the checks against the Config still bound
// what runs.
func lowerLimits(g *draws, d *vdriver) {
	at := time.Duration(g.intRange("set limits at ms", 0, 3000)) * time.Millisecond
	d.run(at)
	d.now = max(d.now, at)
	old := d.core.cfg.Services["a"]
	frac := float64(g.intRange("lowered to %", 10, 100)) / 100
	l := Limits{
		MaxInFlight:       max(1, int(float64(old.MaxInFlight)*frac)),
		RequestsPerMinute: old.RequestsPerMinute * frac,
		TokensPerMinute:   old.TokensPerMinute * frac,
	}
	if old.MaxInFlight == 0 {
		l.MaxInFlight = g.intRange("new cap", 0, 3)
	}
	if old.RequestBurst > 0 {
		l.RequestBurst = max(1, old.RequestBurst*frac)
	}
	if old.TokenBurst > 0 {
		l.TokenBurst = old.TokenBurst * frac
	}
	if err := d.core.SetLimits(d.now, "a", l); err != nil {
		d.t.Fatal(err)
	}
	d.drain()
}

// checkResults checks that each of the calls got exactly one result (the
// driver fails on a second one), every turn its results in its order, and
// that the Core holds nothing afterwards.
func checkResults(rt *testing.T, d *vdriver, calls, turns int) {
	// Exactly one result per id (the driver fails on a second one), and
	// every turn's results in its order.
	if len(d.results) != calls || len(d.turns) != turns {
		rt.Fatalf("%d results, %d turns finished for %d calls in %d turns", len(d.results), len(d.turns), calls, turns)
	}
	for _, tr := range d.turns {
		for i, r := range tr.Results {
			if r.Index != i || r.ID != d.results[r.ID].ID {
				rt.Fatalf("turn %d: result %d is %s (index %d)", tr.Turn, i, r.ID, r.Index)
			}
		}
	}
	// Nothing is left behind.
	if d.core.InFlight() != 0 || d.core.Waiting() != 0 || d.core.Turns() != 0 || d.core.attempts.Len() != 0 || len(d.core.hedging) != 0 {
		rt.Fatalf("left: in flight %d waiting %d turns %d attempts %d", d.core.InFlight(), d.core.Waiting(), d.core.Turns(), d.core.attempts.Len())
	}
}

// checkCaps checks that attempts in flight never exceeded the global cap or
// a service's, that an adaptive limit stayed within them, and that no two
// writes to one resource overlapped.
func checkCaps(rt *testing.T, d *vdriver, cfg Config, services []string, svcPeak map[string]int) {
	// In flight never exceeds any cap.
	if cfg.MaxInFlight > 0 && d.peak > cfg.MaxInFlight {
		rt.Fatalf("peak %d above global cap %d", d.peak, cfg.MaxInFlight)
	}
	for _, s := range services {
		if c := cfg.Services[s].MaxInFlight; c > 0 && svcPeak[s] > c {
			rt.Fatalf("service %s peak %d above cap %d", s, svcPeak[s], c)
		}
		// An adaptive limit stays within the static caps.
		if l, c := d.core.Limit(s), cfg.Services[s].MaxInFlight; l < 0 || (c > 0 && l > c) || (cfg.MaxInFlight > 0 && l > cfg.MaxInFlight) {
			rt.Fatalf("service %s limit %d outside the static caps %d and %d", s, l, c, cfg.MaxInFlight)
		}
	}
	if d.overlaps != 0 {
		rt.Fatalf("%d overlapping writes", d.overlaps)
	}
}

// checkRetryBudgets checks that only a service with a retry budget refused
// retries for it.
func checkRetryBudgets(rt *testing.T, d *vdriver, cfg Config, cs []Call) {
	// Only a service with a retry budget refuses retries for it.
	for id, r := range d.results {
		if errors.Is(r.Err, ErrRetryBudget) {
			var svc string
			for _, c := range cs {
				if c.ID == id {
					svc = c.Service
				}
			}
			if cfg.Services[svc].RetryBudget == nil {
				rt.Fatalf("%s (service %q, no budget) refused by a retry budget: %v", id, svc, r.Err)
			}
		}
	}
}

// checkBuckets checks that what started in any window of time fits the
// bucket's capacity plus its rate times the window, requests and tokens.
func checkBuckets(rt *testing.T, d *vdriver, cfg Config, services []string) {
	// Buckets: what starts in any window fits capacity + rate × window.
	for _, s := range services {
		sc := cfg.Services[s]
		var starts []startRec
		for _, st := range d.starts {
			if st.service == s {
				starts = append(starts, st)
			}
		}
		sort.SliceStable(starts, func(i, j int) bool { return starts[i].at < starts[j].at })
		reqBurst := sc.RequestBurst
		if reqBurst == 0 {
			reqBurst = max(1, sc.RequestsPerMinute/60)
		}
		tokBurst := sc.TokenBurst
		if tokBurst == 0 {
			tokBurst = sc.TokensPerMinute
		}
		for i := range starts {
			var tokens float64
			for j := i; j < len(starts); j++ {
				w := (starts[j].at - starts[i].at).Seconds()
				tokens += float64(starts[j].tokens)
				if sc.RequestsPerMinute > 0 && float64(j-i+1) > reqBurst+sc.RequestsPerMinute/60*w+1e-6 {
					rt.Fatalf("service %s: %d requests in %.3fs window", s, j-i+1, w)
				}
				if sc.TokensPerMinute > 0 && tokens > tokBurst+sc.TokensPerMinute/60*w+1e-3 {
					rt.Fatalf("service %s: %.0f tokens in %.3fs window", s, tokens, w)
				}
			}
		}
	}
}

// checkDependencies checks that no call started before its dependencies
// finished successfully.
func checkDependencies(rt *testing.T, d *vdriver, cs []Call) {
	// No call starts before its dependencies finished successfully.
	for _, c := range cs {
		start, ok := d.startedOf[c.ID]
		for _, dep := range c.After {
			r := d.results[dep]
			if ok && (r.Err != nil || start < r.Finished) {
				rt.Fatalf("%s started at %v; dependency %s finished at %v with %v", c.ID, start, dep, r.Finished, r.Err)
			}
		}
	}
}
