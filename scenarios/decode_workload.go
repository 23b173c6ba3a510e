package scenarios

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/simbench/simbench/spec"
)

func (d *decoder) decodeWorkload(sc *Scenario, t *table) Workload {
	defer t.finish()
	var w Workload
	if n, ok := t.integer("sessions", 1, MaxSessions, "each session is held in memory from the start of the run"); ok {
		w.Sessions = int(n)
	}
	if n, ok := t.integer("turns", 0, MaxTurns, "turns are also bounded by duration; 0 runs until it ends"); ok {
		w.Turns = int(n)
	}
	w.Think = spec.Constant(time.Duration(0))
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
	w.Classes = d.decodeClasses(t, &w)
	if lt := t.sub("llm"); lt != nil {
		w.LLM = d.decodeLLM(sc, lt, true)
		d.checkGrowth(lt, w.LLM, w.Turns, "turns", w.Sessions > 0)
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
		t.add("calls", "a turn can make %s calls (the largest count of each group, added up); it must make at most %d, the most calls one turn can make", spec.ShowAmount(turn), MaxCallsPerTurn)
		return
	}
	if s := w.Subagents; s != nil {
		subs, iter := math.Round(s.Count.Upper()), callsUpper(s.LLM, s.Calls)
		if iter > MaxCallsPerTurn {
			t.add("subagents.calls", "a subagent iteration can make %s calls (the largest count of each group, added up); it must make at most %d, the most calls one turn can make", spec.ShowAmount(iter), MaxCallsPerTurn)
			return
		}
		if turn += subs * iter; turn > MaxCallsPerTurn {
			t.add("subagents", "a turn can have %s calls in flight (up to %s subagents × %s calls an iteration, and the turn's own); it must have at most %d, the most calls one turn can make: start fewer subagents or make fewer calls", spec.ShowAmount(turn), spec.ShowAmount(subs), spec.ShowAmount(iter), MaxCallsPerTurn)
			return
		}
	}
	if n := float64(w.Sessions) * turn; n > MaxCallsAtOnce {
		t.add("sessions", "%d sessions of up to %s calls a turn can have %s calls in flight at once; keep sessions × calls per turn at most %d (about 1 KiB each in memory)", w.Sessions, spec.ShowAmount(turn), spec.ShowAmount(n), MaxCallsAtOnce)
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
// must exist, and its tokens per call (0 when unset); routes lets it name
// a route (a tool's may, a model call's may not).
func (d *decoder) serviceAndTokens(sc *Scenario, t *table, routes bool) (service string, tokens spec.Dist[float64]) {
	tokens = spec.Constant(0.0)
	if svc, ok := t.str("service"); ok {
		service = svc
		switch i, isRoute := d.routes[svc]; {
		case isRoute && !routes:
			t.add("service", "names route %q; only a tool may name a route: name one of its deployments, %s", svc, quoteSome(sc.Routes[i].Deployments))
		case !isRoute:
			d.checkService(sc, t.key("service"), svc)
		}
	} else if !t.has("service") {
		d.add(t.path, "missing service; set service = %s", d.serviceHint(sc))
	}
	if tok, ok := dist(t, "tokens", amounts, tokenBound); ok {
		tokens = tok
	}
	return service, tokens
}

// decodeLLM reads a model call; turn marks workload.llm, the one model
// call that can fail for reasons of the model (success, retries).
func (d *decoder) decodeLLM(sc *Scenario, t *table, turn bool) *LLMCall {
	defer t.finish()
	c := &LLMCall{}
	c.Service, c.Tokens = d.serviceAndTokens(sc, t, false)
	if out, ok := dist(t, "output_tokens", amounts, tokenBound); ok {
		if out.Upper() > c.Tokens.Upper() {
			t.add("output_tokens", "reaches %g, more than tokens (%g), which counts prompt and output; lower output_tokens or raise tokens", out.Upper(), c.Tokens.Upper())
		} else {
			c.Output = out
		}
	}
	if p, ok := t.fraction("success"); ok {
		switch {
		case !turn:
			t.add("success", "only applies to workload.llm, the model turn of a task; a subagent's model call ends its subagent when it fails, so remove it")
		case p == 0:
			t.add("success", "is 0, so every model turn would fail and no task would ever be answered; set the chance a model turn is right, like success = 0.85")
		default:
			c.Success = p
		}
	}
	if n, ok := t.integer("retries", 0, MaxAttempts, "model turns made again after a failure of the model"); ok {
		switch {
		case !turn:
			t.add("retries", "only applies to workload.llm with success; remove it")
		case !t.has("success"):
			t.add("retries", "has no effect without success; add success = 0.85 (the chance a model turn is right) or remove it")
		default:
			c.Retries = int(n)
		}
	}
	c.ContextGrowth, _ = t.integer("context_growth", 0, MaxTokensPerCall, "tokens one call can draw")
	return c
}

// checkGrowth checks a model call's context_growth against the iterations
// its context grows over (what names their key; bounded says whether that
// key bounds them): the last iteration's tokens must stay within
// MaxTokensPerCall.
func (d *decoder) checkGrowth(t *table, c *LLMCall, iterations int, what string, bounded bool) {
	if c.ContextGrowth == 0 {
		return
	}
	if !bounded || iterations == 0 {
		t.add("context_growth", "needs sessions and turns = N: a context grows with a session's turns, and without a set number of them it grows without bound (an open model's arrival is one turn, which never grows); set turns or remove it")
		c.ContextGrowth = 0
		return
	}
	if top := c.Tokens.Upper() + float64(iterations-1)*float64(c.ContextGrowth); top > MaxTokensPerCall {
		t.add("context_growth", "grows the call to %s tokens by iteration %d (tokens' largest draw + (%s − 1) × %d); a call may have at most %d tokens: lower context_growth or %s", spec.ShowAmount(top), iterations, what, c.ContextGrowth, MaxTokensPerCall, what)
		c.ContextGrowth = 0
	}
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
	s.OrchestratorBudget, _ = t.integer("orchestrator_budget", 0, MaxTokenBudget, whyTokenBudget)
	s.FinishProbability, _ = t.fraction("finish_probability")
	if lt := t.sub("llm"); lt != nil {
		s.LLM = d.decodeLLM(sc, lt, false)
		d.checkGrowth(lt, s.LLM, s.MaxIterations, "max_iterations", true)
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
	g := CallGroup{Probability: 1, Count: spec.Constant(1.0)}
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
		named := map[string]int{} // a dependency's first place in this after list
		for j, dep := range g.After {
			key := fmt.Sprintf("%s.after[%d]", keys[i], j)
			if first, dup := named[dep]; dup {
				// A repeat says nothing new and costs a walk of its own
				// in every turn: 65,000 of them made a 10 s run take 33 s.
				d.add(key, "%q is named again (first at after[%d]); name each dependency once", dep, first)
				continue
			}
			named[dep] = j
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
