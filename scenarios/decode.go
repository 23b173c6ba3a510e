package scenarios

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// decodeScenario builds a Scenario from the tree toml.Decode produced.
// Services are decoded before tools, and tools before the workload, so that
// references can be checked as they are read.
func (d *decoder) decodeScenario(root map[string]any, defaultName string) *Scenario {
	t := &table{d: d, m: root}
	sc := &Scenario{Name: defaultName}
	if name, ok := t.str("name"); ok {
		if strings.TrimSpace(name) == "" {
			t.add("name", "is empty; name the scenario")
		} else {
			sc.Name = name
		}
	}
	if desc, ok := t.str("description"); ok {
		if strings.ContainsAny(desc, "\r\n") {
			t.add("description", "spans several lines; keep it to one line and put the rest in a comment")
		}
		sc.Description = desc
	}
	if seed, ok := t.integer("seed", 0, math.MaxInt64, ""); ok {
		sc.Seed = uint64(seed)
	}
	if dur, ok := t.duration("duration"); ok {
		if dur == 0 {
			t.add("duration", "is 0; set the virtual time a run covers, like duration = \"10m\"")
		}
		sc.Duration = dur
	} else if !t.has("duration") {
		t.add("duration", "missing; set the virtual time a run covers, like duration = \"10m\"")
	}

	// A missing or empty table is reported here; one of the wrong type was
	// reported when it was read, so it gets no second problem.
	reported := len(d.problems)
	if st := t.sub("services"); st != nil {
		for _, name := range st.keys() {
			if svc := st.sub(name); svc != nil {
				d.services[name] = len(sc.Services)
				sc.Services = append(sc.Services, d.decodeService(svc, name))
			}
		}
	}
	if len(sc.Services) == 0 && len(d.problems) == reported {
		t.add("services", "no services; add a [services.NAME] table with its limits")
	}
	if tt := t.sub("tools"); tt != nil {
		for _, name := range tt.keys() {
			if tool := tt.sub(name); tool != nil {
				d.tools[name] = len(sc.Tools)
				sc.Tools = append(sc.Tools, d.decodeTool(sc, tool, name))
			}
		}
	}
	if wt := t.sub("workload"); wt != nil {
		sc.Workload = d.decodeWorkload(sc, wt)
	} else if !t.has("workload") {
		t.add("workload", "missing; add a [workload] table saying what the agents do")
	}
	reported = len(d.problems)
	strategies := t.tables("strategy")
	if len(strategies) == 0 && len(d.problems) == reported {
		t.add("strategy", "no strategies; add at least one [[strategy]] table with a name")
	}
	for _, st := range strategies {
		if st != nil {
			sc.Strategies = append(sc.Strategies, d.decodeStrategy(sc, st))
		}
	}
	if tt := t.sub("thresholds"); tt != nil {
		sc.Thresholds = d.decodeThresholds(sc, tt)
	}
	sc.Events = d.decodeEvents(sc, t)
	t.finish()
	return sc
}

func (d *decoder) decodeService(t *table, name string) Service {
	defer t.finish()
	s := Service{Name: name, Limiter: LimiterTokenBucket, Headers: HeadersNone}
	s.RequestsPerSecond, _ = t.rate("rps", time.Second, MaxRequestsPerSecond, whyRPS)
	s.RequestsPerMinute, _ = t.rate("rpm", time.Minute, MaxRequestsPerMinute, whyCredit)
	s.TokensPerMinute, _ = t.rate("tpm", time.Minute, MaxTokensPerMinute, whyCredit)
	if n, ok := t.integer("max_concurrent", 1, MaxCap, whyCap); ok {
		s.MaxConcurrent = int(n)
	}
	s.Limiter = enum(t, "limiter", LimiterTokenBucket, LimiterTokenBucket, LimiterFixedWindow, LimiterSlidingWindow)
	if b, ok := t.positive("burst", MaxRequestsPerMinute, whyCredit); ok {
		s.Burst = b
		if s.Limiter != LimiterTokenBucket {
			t.add("burst", "only applies to limiter = %q; remove it or change the limiter", LimiterTokenBucket)
		}
		if s.RequestsPerSecond == 0 && s.RequestsPerMinute == 0 {
			t.add("burst", "sizes the request bucket, but there is no rps or rpm limit; add one or remove burst")
		}
	}
	s.CountRejected, _ = t.boolean("count_rejected")
	if lat, ok := dist(t, "latency", durations, durationBound); ok {
		s.Latency = lat
	} else if !t.has("latency") {
		s.Latency = Constant(time.Duration(0))
	}
	if lt := t.sub("load"); lt != nil {
		if n, ok := lt.integer("knee", 0, MaxCap, whyCap); ok {
			s.Load.Knee = int(n)
		}
		if f, ok := lt.positive("factor", MaxLoadFactor, "at most 100 times the latency per request in flight, so that latencies stay within a year"); ok {
			s.Load.Factor = f
		} else if !lt.has("factor") {
			d.add(lt.path, "missing factor; set factor = 0.01 for 1%% more latency per request in flight above knee")
		}
		lt.finish()
	}
	if ft := t.sub("faults"); ft != nil {
		s.Faults = d.decodeFaults(ft)
	}
	s.Headers = enum(t, "headers", HeadersNone, HeadersNone, HeadersOpenAI, HeadersAnthropic, HeadersStandard)
	// "none" reads as headers does; "" is the same truth-telling default.
	if s.Lying = enum(t, "lying", LyingNone, LyingNone, "none", LyingShort, LyingMissing); s.Lying == "none" {
		s.Lying = LyingNone
	}
	if s.Lying != LyingNone && s.Headers == HeadersNone {
		t.add("lying", "needs a Retry-After to lie about; set headers = \"openai\", \"anthropic\" or \"standard\"")
	}
	if keys, ok := t.strings("keys"); ok {
		seen := make(map[string]bool, len(keys))
		for i, k := range keys {
			if seen[k] {
				d.add(fmt.Sprintf("%s[%d]", t.key("keys"), i), "repeats key %q; each API key is one tenant", k)
			}
			seen[k] = true
		}
		s.Keys = keys
	}
	if bt := t.sub("background"); bt != nil {
		s.Background = d.decodeBackground(bt)
	}
	s.NetworkDelay = DefaultNetworkDelay
	if nd, ok := dist(t, "network_delay", durations, durationBound); ok {
		s.NetworkDelay = nd
	}
	s.Generation = decodeGeneration(t)
	s.InputTokensPerMinute, _ = t.rate("input_tpm", time.Minute, MaxTokensPerMinute, whyCredit)
	s.OutputTokensPerMinute, _ = t.rate("output_tpm", time.Minute, MaxTokensPerMinute, whyCredit)
	return s
}

// decodeGeneration reads a service's time to first token and output
// tokens per second.
func decodeGeneration(t *table) Generation {
	var g Generation
	if ttft, ok := dist(t, "ttft", durations, durationBound); ok {
		g.TTFT = ttft
	}
	if tps, ok := dist(t, "tokens_per_s", amounts, tokensPerSecondBound); ok {
		if tps.Kind == DistConstant && tps.Value == 0 {
			t.add("tokens_per_s", "is 0, so no answer would ever finish; set the output tokens per second, like tokens_per_s = 60, or remove it")
		} else {
			g.TokensPerSecond = tps
		}
	}
	return g
}

// decodeBackground reads a service's unseen background traffic.
func (d *decoder) decodeBackground(t *table) Background {
	defer t.finish()
	var b Background
	if r, ok := t.rate("rate", time.Second, MaxBackgroundRate, "the fake service accrues background requests one by one"); ok {
		b.Rate = r
	} else if !t.has("rate") {
		d.add(t.path, "missing rate; write background = { rate = \"20/s\", tokens = 500 }")
	}
	b.Tokens, _ = t.integer("tokens", 0, MaxTokensPerCall, "tokens per request")
	b.Burst, _ = t.integer("burst", 1, MaxBackgroundBurst, "background requests arriving together")
	return b
}

func (d *decoder) decodeFaults(t *table) Faults {
	defer t.finish()
	var f Faults
	f.ErrorRate, _ = t.fraction("error_rate")
	f.HangRate, _ = t.fraction("hang_rate")
	f.ResetRate, _ = t.fraction("reset_rate")
	f.Conflict = decodeConflict(t)
	if sum := f.ErrorRate + f.HangRate + f.ResetRate; sum > 1 {
		d.add(t.path, "error_rate + hang_rate + reset_rate is %s; they are fractions of all requests, so keep the sum at most 1", showAmount(sum))
	}
	if st := t.sub("slow_first_byte"); st != nil {
		f.SlowFirstByte.Rate, _ = st.fraction("rate")
		f.SlowFirstByte.Delay, _ = st.duration("delay")
		for _, k := range []string{"rate", "delay"} {
			if !st.has(k) {
				d.add(st.path, "missing %s; write slow_first_byte = { rate = 0.05, delay = \"2s\" }", k)
			}
		}
		st.finish()
	}
	if ot := t.sub("overload"); ot != nil {
		f.Overload.Every, _ = ot.duration("every")
		f.Overload.Length, _ = ot.duration("length")
		f.Overload.Rate = 1
		if r, ok := ot.fraction("rate"); ok {
			if r == 0 {
				ot.add("rate", "is 0, so an episode would reject nothing; set the share of requests it rejects (1 when omitted), or remove overload")
			}
			f.Overload.Rate = r
		}
		switch {
		case !ot.has("every") || !ot.has("length"):
			d.add(ot.path, "needs every and length; write overload = { every = \"5m\", length = \"20s\" }")
		case f.Overload.Every == 0:
			ot.add("every", "is 0; set the mean time between episodes, like every = \"5m\"")
		case f.Overload.Every < MinOverloadEvery:
			ot.add("every", "is %v; it must be at least %v: the service steps through episodes one gap at a time, so shorter gaps only spin", f.Overload.Every, MinOverloadEvery)
		case f.Overload.Length == 0:
			ot.add("length", "is 0; set how long an episode lasts, like length = \"20s\"")
		}
		ot.finish()
	}
	return f
}

// decodeConflict reads faults.conflict: true (every overlapping write
// conflicts), false, or a fraction, the probability that one does.
func decodeConflict(t *table) float64 {
	v, ok := t.get("conflict")
	if !ok {
		return 0
	}
	switch v := v.(type) {
	case bool:
		if v {
			return 1
		}
		return 0
	case int64, float64:
		f, _ := t.fraction("conflict")
		return f
	}
	t.add("conflict", "wants true, false or a fraction, like conflict = true or conflict = 0.5, got %s", describe(v))
	return 0
}

func (d *decoder) decodeTool(sc *Scenario, t *table, name string) Tool {
	defer t.finish()
	tool := Tool{Name: name, Kind: KindRead}
	tool.Service, tool.Tokens = d.serviceAndTokens(sc, t)
	tool.Kind = enum(t, "kind", KindRead, KindRead, KindWrite)
	if r, ok := t.str("resource"); ok {
		tool.Resource = r
		if tool.Kind != KindWrite {
			t.add("resource", "only applies to kind = \"write\" (reads are never serialized); remove it or make the tool a write")
		}
	}
	if idem, ok := t.boolean("idempotent"); ok {
		tool.Idempotent = idem
		if tool.Kind != KindWrite {
			t.add("idempotent", "only applies to kind = \"write\" (reads are always safe to retry); remove it")
		}
	}
	if from, ok := t.str("resource_from"); ok {
		tool.ResourceFrom = from
		if tool.Kind != KindWrite {
			t.add("resource_from", "only applies to kind = \"write\" (reads never race); remove it or make the tool a write")
		} else if msg := checkResourceFrom(from); msg != "" {
			t.add("resource_from", "%s", msg)
		}
	}
	return tool
}

// checkResourceFrom says what is wrong with a tool's resource_from, or "".
func checkResourceFrom(s string) string {
	kind, arg, _ := strings.Cut(s, ":")
	switch {
	case kind == "path":
		if n, err := strconv.Atoi(arg); err != nil || n < 1 {
			return fmt.Sprintf("%q: the path segment must be a whole number from 1, like \"path:1\"", s)
		}
		return ""
	case (kind == "json" || kind == "header") && arg != "":
		return ""
	}
	return fmt.Sprintf("%q is not \"path:N\", \"json:FIELD\" or \"header:NAME\"", s)
}

// checkService reports a reference to a service the scenario lacks.
func (d *decoder) checkService(sc *Scenario, key, name string) {
	if _, ok := d.services[name]; ok {
		return
	}
	names := d.serviceList(sc)
	if near := d.suggest.closest(name, names); near != "" {
		d.add(key, "unknown service %q; did you mean %s?", name, near)
	} else if len(names) == 0 {
		d.add(key, "unknown service %q; define it in a [services.%s] table", name, name)
	} else {
		d.add(key, "unknown service %q; define [services.%s] or use one of %s", name, name, quoteSome(names))
	}
}

func (d *decoder) checkTool(sc *Scenario, key, name, what string) bool {
	if _, ok := d.tools[name]; ok {
		return true
	}
	names := d.toolList(sc)
	if near := d.suggest.closest(name, names); near != "" {
		d.add(key, "unknown %s %q; did you mean %s?", what, name, near)
	} else {
		d.add(key, "unknown %s %q; define [tools.%s] or use one of %s", what, name, name, quoteSome(names))
	}
	return false
}

// serviceList returns the names of the services decoded so far, in file
// order; the list is built again only when a service was added since.
func (d *decoder) serviceList(sc *Scenario) []string {
	if len(d.serviceNames) != len(sc.Services) {
		d.serviceNames = make([]string, len(sc.Services))
		for i, s := range sc.Services {
			d.serviceNames[i] = s.Name
		}
	}
	return d.serviceNames
}

// toolList returns the names of the tools decoded so far, as serviceList.
func (d *decoder) toolList(sc *Scenario) []string {
	if len(d.toolNames) != len(sc.Tools) {
		d.toolNames = make([]string, len(sc.Tools))
		for i, t := range sc.Tools {
			d.toolNames[i] = t.Name
		}
	}
	return d.toolNames
}

func (d *decoder) serviceHint(sc *Scenario) string {
	if names := d.serviceList(sc); len(names) > 0 {
		return fmt.Sprintf("%q (one of %s)", names[0], quoteSome(names))
	}
	return `"NAME" and define [services.NAME]`
}

func (d *decoder) decodeWorkload(sc *Scenario, t *table) Workload {
	defer t.finish()
	var w Workload
	if n, ok := t.integer("sessions", 1, MaxSessions, "each session is held in memory from the start of the run"); ok {
		w.Sessions = int(n)
	}
	if n, ok := t.integer("turns", 0, MaxTurns, "turns are also bounded by duration; 0 runs until it ends"); ok {
		w.Turns = int(n)
	}
	w.Think = Constant(time.Duration(0))
	if think, ok := dist(t, "think", durations, durationBound); ok {
		w.Think = think
	}
	if ramp, ok := t.duration("ramp"); ok {
		w.Ramp = ramp
		if sc.Duration > 0 && ramp >= sc.Duration {
			t.add("ramp", "is %v, not shorter than the run (duration %v), so some sessions would never start; shorten it", ramp, sc.Duration)
		}
	}
	w.Arrival = enum(t, "arrival", "", ArrivalPoisson, ArrivalConstant)
	w.ArrivalRate, _ = t.rate("arrival_rate", time.Second, MaxArrivalRate, "at least 10µs between arrivals")
	switch open, closed := t.has("arrival_rate"), t.has("sessions"); {
	case open && closed:
		t.add("arrival_rate", "set either sessions (closed model) or arrival_rate (open model), not both")
	case !open && !closed:
		d.add(t.path, "no load; set sessions = N (closed model) or arrival_rate = \"2/s\" (open model)")
	case open:
		for _, k := range []string{"turns", "think", "ramp"} {
			if t.has(k) {
				t.add(k, "only applies to the closed model (sessions); in the open model each arrival is one turn, so remove it")
			}
		}
		if w.Arrival == "" {
			w.Arrival = ArrivalPoisson
		}
	case closed && t.has("arrival"):
		t.add("arrival", "needs arrival_rate (open model); remove it or replace sessions with arrival_rate = \"2/s\"")
	}
	if w.Arrival != "" && w.Sessions > 0 {
		w.Arrival = ""
	}
	d.decodeProcesses(t, &w)
	if lt := t.sub("llm"); lt != nil {
		w.LLM = d.decodeLLM(sc, lt)
	}
	w.Calls = d.decodeCalls(sc, t, "calls")
	if len(w.Calls) == 0 && w.LLM == nil && !t.has("calls") {
		d.add(t.path, "a turn makes no calls; add calls = [ { tool = \"NAME\", count = 8 } ] or llm = { service = \"NAME\" }")
	}
	if st := t.sub("subagents"); st != nil {
		w.Subagents = d.decodeSubagents(sc, st)
	}
	d.checkTurnSize(t, &w)
	if ct := t.sub("cancel"); ct != nil {
		w.Cancel.Probability, _ = ct.fraction("probability")
		if after, ok := dist(ct, "after", durations, durationBound); ok {
			w.Cancel.After = after
		} else if w.Cancel.Probability > 0 && !ct.has("after") {
			d.add(ct.path, "probability > 0 needs after, the time from a turn's start to the user's cancel, like after = { dist = \"uniform\", min = \"1s\", max = \"5s\" }")
		}
		if ct.has("after") && !ct.has("probability") {
			ct.add("after", "has no effect without probability; add probability = 0.1 (the fraction of turns the user cancels)")
		}
		w.Cancel.ParentTimeout, _ = ct.duration("parent_timeout")
		ct.finish()
	}
	return w
}

// checkTurnSize bounds the calls one turn can have in flight, and in the
// closed model the calls every session's turn together can, by the largest
// count each group can draw (MaxCallsPerTurn, MaxCallsAtOnce).
func (d *decoder) checkTurnSize(t *table, w *Workload) {
	turn := callsUpper(w.LLM, w.Calls)
	if turn > MaxCallsPerTurn {
		t.add("calls", "a turn can make %s calls (the largest count of each group, added up); it must make at most %d, the most calls one turn can make", showAmount(turn), MaxCallsPerTurn)
		return
	}
	if s := w.Subagents; s != nil {
		subs, iter := math.Round(s.Count.Upper()), callsUpper(s.LLM, s.Calls)
		if iter > MaxCallsPerTurn {
			t.add("subagents.calls", "a subagent iteration can make %s calls (the largest count of each group, added up); it must make at most %d, the most calls one turn can make", showAmount(iter), MaxCallsPerTurn)
			return
		}
		if turn += subs * iter; turn > MaxCallsPerTurn {
			t.add("subagents", "a turn can have %s calls in flight (up to %s subagents × %s calls an iteration, and the turn's own); it must have at most %d, the most calls one turn can make: start fewer subagents or make fewer calls", showAmount(turn), showAmount(subs), showAmount(iter), MaxCallsPerTurn)
			return
		}
	}
	if n := float64(w.Sessions) * turn; n > MaxCallsAtOnce {
		t.add("sessions", "%d sessions of up to %s calls a turn can have %s calls in flight at once; keep sessions × calls per turn at most %d (about 1 KiB each in memory)", w.Sessions, showAmount(turn), showAmount(n), MaxCallsAtOnce)
	}
}

// callsUpper is the most calls a turn (or an iteration) can make: its model
// call and the largest count of each group.
func callsUpper(llm *LLMCall, groups []CallGroup) float64 {
	n := 0.0
	if llm != nil {
		n++
	}
	for _, g := range groups {
		n += math.Round(g.Count.Upper())
	}
	return n
}

// serviceAndTokens reads the service a tool or model call goes to, which
// must exist, and its tokens per call (0 when unset).
func (d *decoder) serviceAndTokens(sc *Scenario, t *table) (service string, tokens Dist[float64]) {
	tokens = Constant(0.0)
	if svc, ok := t.str("service"); ok {
		service = svc
		d.checkService(sc, t.key("service"), svc)
	} else if !t.has("service") {
		d.add(t.path, "missing service; set service = %s", d.serviceHint(sc))
	}
	if tok, ok := dist(t, "tokens", amounts, tokenBound); ok {
		tokens = tok
	}
	return service, tokens
}

func (d *decoder) decodeLLM(sc *Scenario, t *table) *LLMCall {
	defer t.finish()
	c := &LLMCall{}
	c.Service, c.Tokens = d.serviceAndTokens(sc, t)
	if out, ok := dist(t, "output_tokens", amounts, tokenBound); ok {
		if out.Upper() > c.Tokens.Upper() {
			t.add("output_tokens", "reaches %g, more than tokens (%g), which counts prompt and output; lower output_tokens or raise tokens", out.Upper(), c.Tokens.Upper())
		} else {
			c.Output = out
		}
	}
	return c
}

func (d *decoder) decodeSubagents(sc *Scenario, t *table) *Subagents {
	defer t.finish()
	s := &Subagents{}
	if c, ok := dist(t, "count", amounts, subagentBound); ok {
		s.Count = c
	} else if !t.has("count") {
		d.add(t.path, "missing count; set count = 4 (subagents per orchestrator turn)")
	}
	if n, ok := t.integer("max_iterations", 1, MaxIterations, "a subagent's iterations run one after another; the run's duration ends them anyway"); ok {
		s.MaxIterations = int(n)
	} else if !t.has("max_iterations") {
		d.add(t.path, "missing max_iterations; cap each subagent's iterations, like max_iterations = 8")
	}
	s.TokenBudget, _ = t.integer("token_budget", 0, MaxTokenBudget, whyTokenBudget)
	s.FinishProbability, _ = t.fraction("finish_probability")
	if lt := t.sub("llm"); lt != nil {
		s.LLM = d.decodeLLM(sc, lt)
	}
	s.Calls = d.decodeCalls(sc, t, "calls")
	if len(s.Calls) == 0 && s.LLM == nil && !t.has("calls") {
		d.add(t.path, "a subagent iteration makes no calls; add calls = [ … ] or llm = { service = \"NAME\" }")
	}
	return s
}

// decodeCalls decodes a list of call groups and checks its dependencies.
func (d *decoder) decodeCalls(sc *Scenario, t *table, k string) []CallGroup {
	entries := t.tables(k)
	groups := make([]CallGroup, 0, len(entries))
	keys := make([]string, 0, len(entries)) // each group's path, for dependency problems
	for _, gt := range entries {
		if gt == nil {
			continue
		}
		groups = append(groups, d.decodeGroup(sc, gt))
		keys = append(keys, gt.path)
	}
	if v, present := t.m[k]; present && len(entries) == 0 {
		if _, isArr := v.([]any); isArr {
			t.add(k, "is empty; list at least one group, like %s = [ { tool = \"NAME\", count = 8 } ]", k)
		}
	}
	d.checkDependencies(groups, keys)
	return groups
}

func (d *decoder) decodeGroup(sc *Scenario, t *table) CallGroup {
	defer t.finish()
	g := CallGroup{Probability: 1, Count: Constant(1.0)}
	tool, hasTool := t.str("tool")
	if hasTool && d.checkTool(sc, t.key("tool"), tool, "tool") {
		g.Tool = tool
	}
	if mt := t.sub("mix"); mt != nil {
		if hasTool || t.has("tool") {
			d.add(t.path, "set tool or mix, not both")
		}
		for _, name := range mt.keys() {
			w, ok := mt.positive(name, MaxWeight, "weights are relative, and their sum must stay exact")
			if ok && d.checkTool(sc, mt.key(name), name, "tool") {
				g.Mix = append(g.Mix, Weighted{Tool: name, Weight: w})
			}
		}
		if len(mt.m) == 0 {
			d.add(mt.path, "is empty; give tools and weights, like mix = { search = 3, fetch = 1 }")
		}
	} else if !t.has("tool") && !t.has("mix") {
		d.add(t.path, "missing tool; set tool = \"NAME\" or mix = { NAME = weight, … }")
	}
	if c, ok := dist(t, "count", amounts, countBound); ok {
		g.Count = c
	}
	if p, ok := t.fraction("probability"); ok {
		g.Probability = p
	}
	g.After, _ = t.strings("after")
	return g
}

// checkDependencies reports after entries naming tools that no group of the
// list emits, and dependency cycles. Edges go from each tool of a group to
// each tool in its after list. It takes time linear in the groups and
// their edges, however long the chains.
func (d *decoder) checkDependencies(groups []CallGroup, keys []string) {
	emitted := map[string]bool{}
	for _, g := range groups {
		for _, name := range g.Tools() {
			emitted[name] = true
		}
	}
	type edge struct{ to, key string }
	edges := map[string][]edge{}
	var nodes []string // tools in first-seen order, for a deterministic walk
	var emittedList string
	for i, g := range groups {
		for j, dep := range g.After {
			key := fmt.Sprintf("%s.after[%d]", keys[i], j)
			if !emitted[dep] {
				if emittedList == "" {
					emittedList = quoteSome(slices.Sorted(maps.Keys(emitted)))
				}
				d.add(key, "unknown dependency %q: no group in this list emits that tool; depend on one of %s or add a group for it", dep, emittedList)
				continue
			}
			for _, from := range g.Tools() {
				if _, seen := edges[from]; !seen {
					nodes = append(nodes, from)
				}
				edges[from] = append(edges[from], edge{dep, key})
			}
		}
	}
	// A depth-first walk with an explicit stack, so that a chain of 100,000
	// groups costs no deep recursion; onStack maps a tool on the current
	// path to its place in it, to cut a cycle out of the path at once.
	const done = -1
	onStack := map[string]int{}
	type frame struct {
		node string
		next int // the next edge of node to follow
	}
	var stack []frame
	var path []string
	for _, root := range nodes {
		if _, seen := onStack[root]; seen {
			continue
		}
		stack = append(stack, frame{node: root})
		onStack[root], path = 0, append(path, root)
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next == len(edges[f.node]) {
				onStack[f.node] = done
				stack, path = stack[:len(stack)-1], path[:len(path)-1]
				continue
			}
			e := edges[f.node][f.next]
			f.next++
			switch at, seen := onStack[e.to]; {
			case !seen:
				onStack[e.to] = len(path)
				stack, path = append(stack, frame{node: e.to}), append(path, e.to)
			case at != done:
				d.add(e.key, "dependency cycle %s; calls in a cycle can never start, so remove one of these after entries", showCycle(path[at:], e.to))
			}
		}
	}
}

// showCycle writes a dependency cycle as a → b → a, eliding the middle of
// a long one so that a problem stays one line.
func showCycle(path []string, to string) string {
	const most = 8
	if len(path) <= most {
		return strings.Join(append(slices.Clone(path), to), " → ")
	}
	head, tail := path[:most/2], path[len(path)-most/2:]
	return fmt.Sprintf("%s → … (%d more) → %s → %s", strings.Join(head, " → "), len(path)-most, strings.Join(tail, " → "), to)
}

func (d *decoder) decodeStrategy(sc *Scenario, t *table) Strategy {
	defer t.finish()
	s := Strategy{Headroom: 1, Retry: defaultRetry(), SerializeWrites: true,
		FanOutMode: FanOutBatch, Join: JoinPartial, CancelAt: CancelAtTransport, Quota: Quota{Mode: QuotaFull}}
	if name, ok := t.str("name"); ok {
		s.Name = name
		switch first, dup := d.strategies[name]; {
		case strings.TrimSpace(name) == "":
			t.add("name", "is empty; name the strategy, like name = \"bounded-8\"")
		case dup:
			t.add("name", "strategy %q is already defined at line %d; give each strategy a unique name", name, d.pos.lookup(first).line)
		default:
			d.strategies[name] = t.key("name")
		}
	} else if !t.has("name") {
		d.add(t.path, "missing name; name the strategy, like name = \"bounded-8\"")
	}
	s.Description, _ = t.str("description")
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
	if h, ok := t.positive("headroom", math.MaxFloat64, ""); ok {
		s.Headroom = h
		switch {
		case h > 1:
			t.add("headroom", "is %s; it is the fraction of the published limits to use, so keep it in (0, 1]", showAmount(h))
		case h < MinHeadroom:
			t.add("headroom", "is %s; it must be at least %s: below 1%% of the published limits the buckets barely refill, and their waits overflow", showAmount(h), showAmount(MinHeadroom))
		case !s.TokenBucket:
			t.add("headroom", "only applies with token_bucket = true; add that or remove headroom")
		}
	}
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
	s.FanOutMode = enum(t, "fan_out_mode", FanOutBatch, FanOutBatch, FanOutTruncate)
	if t.has("fan_out_mode") && s.FanOut == 0 {
		t.add("fan_out_mode", "only applies with fan_out > 0; add fan_out = N or remove fan_out_mode")
	}
	s.Join = enum(t, "join", JoinPartial, JoinPartial, JoinAllOrNothing)
	s.AttemptTimeout, _ = t.duration("attempt_timeout")
	s.CallTimeout, _ = t.duration("call_timeout")
	s.TurnTimeout, _ = t.duration("turn_timeout")
	if s.AttemptTimeout > 0 && s.CallTimeout > 0 && s.AttemptTimeout > s.CallTimeout {
		t.add("attempt_timeout", "attempt_timeout (%s) is longer than call_timeout (%s); an attempt cannot outlive its call", s.AttemptTimeout, s.CallTimeout)
	}
	if s.CallTimeout > 0 && s.TurnTimeout > 0 && s.CallTimeout > s.TurnTimeout {
		t.add("call_timeout", "call_timeout (%s) is longer than turn_timeout (%s); a call cannot outlive its turn", s.CallTimeout, s.TurnTimeout)
	}
	s.TokenBudget, _ = t.integer("token_budget", 0, MaxTokenBudget, whyTokenBudget)
	if n, ok := t.integer("attempt_budget", 0, MaxCap, whyCap); ok {
		s.AttemptBudget = int(n)
	}
	if n, ok := t.integer("max_queued", 0, MaxCap, whyCap); ok {
		s.MaxQueued = int(n)
	}
	s.CancelAt = enum(t, "cancel_at", CancelAtTransport, CancelAtTransport, CancelAtReader)
	return s
}

// decodeAdaptive reads a strategy's adaptive concurrency limit.
func (d *decoder) decodeAdaptive(sc *Scenario, t *table) *Adaptive {
	defer t.finish()
	a := &Adaptive{}
	if !t.has("algorithm") {
		t.add("algorithm", "is required; write algorithm = \"aimd\" or algorithm = \"gradient\"")
	}
	a.Algorithm = enum(t, "algorithm", AdaptiveAIMD, AdaptiveAIMD, AdaptiveGradient)
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
			t.add("decrease", "is %s; it multiplies the limit on a 429, so keep it strictly between 0 and 1", showAmount(f))
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
			t.add("tolerance", "is %s; it is the latency ratio tolerated, so it must be at least 1", showAmount(f))
		}
		a.Tolerance = f
	}
	a.LongWindow = whole("long_window", 1)
	a.QueueSize, _ = t.positive("queue_size", MaxCap, whyCap)
	if a.Algorithm == AdaptiveAIMD {
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
			t.add(k, "is %s; it must be between 0 and %s", showAmount(f), showAmount(MaxRetryBudget))
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
		t.add("max", "is %s; a budget holding less than one retry never allows one, so make it at least 1", showAmount(b.Max))
	}
	return b
}

// defaultRetry is the policy of a strategy without a retry table: one
// attempt, no retries.
func defaultRetry() Retry {
	return Retry{Backoff: BackoffNone, HonorRetryAfter: true, OverMaxRetryAfter: OverMaxClamp}
}

func (d *decoder) decodeRetry(t *table) Retry {
	defer t.finish()
	r := defaultRetry()
	r.Backoff = enum(t, "backoff", BackoffNone, BackoffNone, BackoffConstant, BackoffExponential,
		BackoffFullJitter, BackoffEqualJitter, BackoffDecorrelatedJitter)
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
	r.OverMaxRetryAfter = enum(t, "over_max_retry_after", OverMaxClamp, OverMaxClamp, OverMaxFail)
	if r.Backoff != BackoffNone && r.Base == 0 && t.has("backoff") {
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
