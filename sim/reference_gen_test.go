package sim

import (
	"fmt"
	"slices"
	"strings"

	"pgregory.net/rapid"
)

// genScenario draws a small scenario file as TOML text, touching every key
// of the format (TestReferenceGeneratorKeys holds it to that): closed
// sessions or open arrivals, think time and ramps, dependencies and writes,
// fan-out, progressive joins that fold or drop, hedging, priority classes,
// budgets, subagents and model calls, timed events, retries of every
// backoff with and without Retry-After, token buckets, adaptive limits,
// fleets of processes with every quota mode, faults and cancels. Runs stay
// short: a few virtual seconds, a few sessions. Empirical distributions
// read genEmpiricalFile, which the caller writes beside the file.
func genScenario(t *rapid.T) (toml string) { return genScenarioUpTo(6_000)(t) }

// genScenarioUpTo is genScenario with runs of up to longest milliseconds
// (at least 1,000): the long suite soaks longer ones.
func genScenarioUpTo(longest int) func(t *rapid.T) string {
	return func(t *rapid.T) string {
		g := &tomlGen{t: t, longest: longest}
		g.top()
		return g.b.String()
	}
}

// genEmpiricalFile is the name of the file empirical distributions read,
// and genEmpirical its content: latencies in milliseconds, one a line.
const (
	genEmpiricalFile = "lat.txt"
	genEmpirical     = "40ms\n80ms\n120ms\n200ms\n350ms\n"
)

type tomlGen struct {
	t *rapid.T
	b strings.Builder
	// names of what was generated, for references
	services []string
	tools    []string
	classes  []string
	sessions int
	classA   int // the first class's sessions (with classes)
	procs    int
	llm      bool   // the workload has a model call, on service "s0"
	limited  []bool // each service has a limit of some kind
	turns    bool   // sessions have a set number of turns
	duration int    // milliseconds
	longest  int    // the longest duration to draw, in milliseconds
	// recommend: a strategy is marked the one recommend tunes
	recommend bool
	// hedgeable: some read tool is idempotent, so strategies may hedge
	hedgeable bool
	// routed: the scenario has route r0, which tools may name
	routed bool
}

func (g *tomlGen) line(format string, args ...any) {
	fmt.Fprintf(&g.b, format+"\n", args...)
}

func (g *tomlGen) bool(label string) bool { return rapid.Bool().Draw(g.t, label) }
func (g *tomlGen) intn(label string, lo, hi int) int {
	return rapid.IntRange(lo, hi).Draw(g.t, label)
}
func (g *tomlGen) pick(label string, from ...string) string {
	return rapid.SampledFrom(from).Draw(g.t, label)
}

// chance draws true one time in n.
func (g *tomlGen) chance(label string, n int) bool { return g.intn(label, 1, n) == 1 }

func (g *tomlGen) ms(label string, lo, hi int) string {
	return fmt.Sprintf("%q", fmt.Sprintf("%dms", g.intn(label, lo, hi)))
}

// frac draws a fraction lo/100..hi/100.
func (g *tomlGen) frac(label string, lo, hi int) string {
	return fmt.Sprintf("%g", float64(g.intn(label, lo, hi))/100)
}

// durDist draws a distribution of durations between about lo and hi
// milliseconds, in every form the format has.
func (g *tomlGen) durDist(label string, lo, hi int) string {
	d := func(name string, a, b int) string { return g.ms(label+" "+name, a, b) }
	mid := (lo + hi) / 2
	pos := max(lo, 1) // the least of a parameter that must be above 0
	switch g.pick(label+" dist", "plain", "constant", "uniform", "normal", "lognormal", "exponential", "pareto", "empirical") {
	case "plain":
		return d("value", lo, hi)
	case "constant":
		return fmt.Sprintf(`{ dist = "constant", value = %s }`, d("value", lo, hi))
	case "uniform":
		return fmt.Sprintf(`{ dist = "uniform", min = %s, max = %s }`, d("min", lo, mid), d("max", mid+1, hi))
	case "normal":
		return fmt.Sprintf(`{ dist = "normal", mean = %s, stddev = %s, max = %s }`, d("mean", mid, mid+10), d("stddev", 1, max(2, mid/4)), d("max", hi+10, hi+10))
	case "lognormal":
		return fmt.Sprintf(`{ dist = "lognormal", p50 = %s, p95 = %s, max = %s }`, d("p50", pos, mid), d("p95", mid+1, hi), d("max", hi+1, hi+1))
	case "exponential":
		return fmt.Sprintf(`{ dist = "exponential", mean = %s, max = %s }`, d("mean", pos, mid), d("max", hi, hi))
	case "pareto":
		return fmt.Sprintf(`{ dist = "pareto", min = %s, alpha = %s, max = %s }`, d("min", pos, mid), g.frac(label+" alpha", 110, 300), d("max", hi, hi))
	default:
		return fmt.Sprintf(`{ dist = "empirical", file = %q }`, genEmpiricalFile)
	}
}

// numDist draws a distribution of whole numbers (counts, tokens) between
// about lo and hi.
func (g *tomlGen) numDist(label string, lo, hi int) string {
	n := func(name string, a, b int) int { return g.intn(label+" "+name, a, b) }
	mid := (lo + hi) / 2
	switch g.pick(label+" dist", "plain", "constant", "uniform", "normal", "lognormal", "exponential", "pareto") {
	case "plain":
		return fmt.Sprint(n("value", lo, hi))
	case "constant":
		return fmt.Sprintf(`{ dist = "constant", value = %d }`, n("value", lo, hi))
	case "uniform":
		return fmt.Sprintf(`{ dist = "uniform", min = %d, max = %d }`, n("min", lo, mid), n("max", mid+1, hi+1))
	case "normal":
		return fmt.Sprintf(`{ dist = "normal", mean = %d, stddev = %d, max = %d }`, n("mean", mid, mid+1), n("stddev", 1, max(1, mid/2)), hi+1)
	case "lognormal":
		return fmt.Sprintf(`{ dist = "lognormal", p50 = %d, p95 = %d, max = %d }`, n("p50", lo+1, mid+1), n("p95", mid+2, hi+2), hi+2)
	case "exponential":
		return fmt.Sprintf(`{ dist = "exponential", mean = %d, max = %d }`, n("mean", lo+1, mid+1), hi+1)
	default:
		return fmt.Sprintf(`{ dist = "pareto", min = %d, alpha = %s, max = %d }`, n("min", lo+1, mid+1), g.frac(label+" alpha", 110, 300), hi+2)
	}
}

func (g *tomlGen) top() {
	g.line(`name = "generated"`)
	if g.bool("description") {
		g.line(`description = "a generated scenario"`)
	}
	g.line(`seed = %d`, rapid.Uint32().Draw(g.t, "seed"))
	g.duration = g.intn("duration", 1_000, g.longest)
	g.line(`duration = "%dms"`, g.duration)
	g.services = []string{"s0", "s1"}[:g.intn("services", 1, 2)]
	g.limited = make([]bool, len(g.services))
	g.workloadHead()
	for i, s := range g.services {
		g.service(i, s)
	}
	g.toolsSection()
	g.workloadTables()
	for i := range g.intn("strategies", 1, 3) {
		g.strategy(i)
	}
	g.events()
	if g.chance("thresholds", 4) {
		g.line(`[thresholds]`)
		g.line(`answer_p95 = "< 5s"`)
		g.line(`answered_share = ">= 0.5"`)
		g.line(`[thresholds.st0]`)
		g.line(`rate_limited_share = "<= 0.5"`)
	}
	if g.chance("check", 4) {
		g.check()
	}
	// Drawn last, so that the scenarios drawn before the key existed stay
	// the same, and written first, among the top-level keys. The
	// simulation ignores it (it is the decision's); the cost objective
	// needs a priced service, so it is left to the decision's tests.
	if o := rapid.SampledFrom([]string{"", "answer_p95", "completion"}).Draw(g.t, "objective"); o != "" {
		rest := g.b.String()
		g.b.Reset()
		g.line(`objective = %q`, o)
		g.b.WriteString(rest)
	}
}

// workloadHead draws the workload's shape; the [workload] table itself is
// written after the tools (workloadTables), as it names them.
func (g *tomlGen) workloadHead() {
	g.procs = 1
	if g.chance("fleet", 3) {
		g.procs = g.intn("processes", 2, 3)
	}
	if g.bool("closed") {
		g.sessions = g.intn("sessions", 1, 6)
		if g.sessions >= 2 && g.chance("classes", 2) {
			g.classA = g.intn("class a sessions", 1, g.sessions-1)
			g.classes = []string{"interactive", "batch"}
		}
	}
	g.llm = g.chance("llm", 3)
}

func (g *tomlGen) service(i int, name string) {
	g.line(``)
	g.line(`[services.%s]`, name)
	hasReq := false
	if g.bool(name + " rps") {
		g.line(`rps = %d`, g.intn(name+" rps value", 2, 40))
		hasReq = true
	}
	if g.chance(name+" rpm", 3) {
		g.line(`rpm = %q`, fmt.Sprintf("%d/s", g.intn(name+" rpm value", 2, 40)))
		hasReq = true
	}
	g.limited[i] = hasReq
	if g.chance(name+" tpm", 3) {
		g.limited[i] = true
		g.line(`tpm = %d`, g.intn(name+" tpm value", 50_000, 500_000))
	}
	if g.chance(name+" input_tpm", 5) {
		g.line(`input_tpm = %d`, g.intn(name+" input_tpm value", 50_000, 500_000))
	}
	if g.chance(name+" output_tpm", 5) {
		g.line(`output_tpm = %q`, fmt.Sprintf("%d/s", g.intn(name+" output_tpm value", 500, 5_000)))
	}
	if g.chance(name+" daily", 6) {
		// A day that ends within the run (starting up to 90 s before the
		// reset) and a quota a run can spend.
		g.line(`rpd = %d`, g.intn(name+" rpd value", 20, 400))
		if g.bool(name + " tpd") {
			g.line(`tpd = %d`, g.intn(name+" tpd value", 20_000, 400_000))
		}
		zone := g.pick(name+" timezone", "UTC", "America/Los_Angeles", "Asia/Kolkata")
		g.line(`timezone = %q`, zone)
		reset := g.pick(name+" daily_reset", "00:00", "09:30")
		g.line(`daily_reset = %q`, reset)
		g.line(`clock_start = "2025-03-08T%s:%02d"`, map[string]string{"00:00": "23:58", "09:30": "09:28"}[reset], g.intn(name+" clock_start s", 0, 59))
	}
	if g.bool(name + " max_concurrent") {
		g.line(`max_concurrent = %d`, g.intn(name+" max_concurrent value", 1, 8))
		g.limited[i] = true
	}
	limiter := g.pick(name+" limiter", "", "token_bucket", "fixed_window", "sliding_window")
	if limiter != "" {
		g.line(`limiter = %q`, limiter)
	}
	if hasReq && limiter == "token_bucket" && g.bool(name+" burst") {
		g.line(`burst = %d`, g.intn(name+" burst value", 1, 10))
	}
	if g.chance(name+" count_rejected", 3) {
		g.line(`count_rejected = true`)
	}
	if g.chance(name+" dedupe_writes", 3) {
		g.line(`dedupe_writes = true`)
	}
	g.line(`latency = %s`, g.durDist(name+" latency", 20, 400))
	if g.chance(name+" load", 4) {
		g.line(`load = { knee = %d, factor = %s }`, g.intn(name+" knee", 1, 6), g.frac(name+" factor", 1, 20))
	}
	if a := g.pick(name+" api", "", "", "", "openai", "anthropic", "generic", "azure", "gemini", "bedrock"); a != "" {
		g.line(`api = %q`, a)
	}
	h := g.pick(name+" headers", "", "none", "openai", "anthropic", "standard")
	if h != "" {
		g.line(`headers = %q`, h)
	}
	if h != "" && h != "none" {
		if l := g.pick(name+" lying", "", "none", "short", "missing"); l != "" {
			g.line(`lying = %q`, l)
		}
	}
	projects := false
	if g.chance(name+" keys", 4) {
		if projects = g.bool(name + " projects"); projects {
			// Nested limits, each level within the one above: the
			// organisation's limits, when set, are at least rps 2, rpm
			// 120, tpm 50,000 and max_concurrent 1. The agents send
			// team-a, in the project.
			g.line(`keys = [{ key = "team-a", project = "research", rps = %d, rpm = %d, tpm = %d, max_concurrent = 1 }, "team-b"]`,
				g.intn(name+" key rps", 1, 2), g.intn(name+" key rpm", 10, 60), g.intn(name+" key tpm", 1_000, 10_000))
		} else {
			g.line(`keys = ["team-a", "team-b"]`)
		}
	}
	if g.chance(name+" background", 4) {
		g.line(`background = { rate = "%d/s", tokens = %d, burst = %d }`, g.intn(name+" bg rate", 1, 10), g.intn(name+" bg tokens", 0, 500), g.intn(name+" bg burst", 1, 4))
	}
	if g.chance(name+" network_delay", 3) {
		g.line(`network_delay = %s`, g.durDist(name+" network_delay", 1, 30))
	}
	if g.chance(name+" streaming", 4) {
		g.line(`ttft = %s`, g.durDist(name+" ttft", 10, 200))
		g.line(`tokens_per_s = %s`, g.numDist(name+" tokens_per_s", 40, 400))
	}
	if g.chance(name+" prices", 4) {
		g.line(`price_per_1k_input = 0.003`)
		g.line(`price_per_1k_output = 0.015`)
	}
	if g.bool(name + " faults") {
		g.line(`[services.%s.faults]`, name)
		g.line(`error_rate = %s`, g.frac(name+" error_rate", 0, 15))
		if g.bool(name + " hang") {
			g.line(`hang_rate = %s`, g.frac(name+" hang_rate", 0, 5))
		}
		if g.bool(name + " reset") {
			g.line(`reset_rate = %s`, g.frac(name+" reset_rate", 0, 5))
		}
		if g.chance(name+" slow_first_byte", 3) {
			g.line(`slow_first_byte = { rate = %s, delay = %s }`, g.frac(name+" sfb rate", 1, 20), g.ms(name+" sfb delay", 100, 2000))
		}
		if g.chance(name+" overload", 3) {
			g.line(`overload = { every = %s, length = %s, rate = %s }`, g.ms(name+" ol every", 1000, 3000), g.ms(name+" ol length", 100, 900), g.frac(name+" ol rate", 10, 90))
		}
		if g.chance(name+" conflict", 3) {
			g.line(`conflict = true`)
		}
		if g.chance(name+" credit", 4) {
			g.line(`credit = %d`, g.intn(name+" credit value", 1_000, 100_000))
		}
		if g.chance(name+" context_window", 4) {
			g.line(`context_window = %d`, g.intn(name+" context_window value", 500, 5_000))
		}
		if b := g.pick(name+" retry_delay_body", "", "besides", "instead"); b != "" && h != "" && h != "none" {
			g.line(`retry_delay_body = %q`, b)
		}
	}
	if projects {
		g.line(`[services.%s.projects.research]`, name)
		g.line(`rps = 2`)
		g.line(`rpm = %d`, g.intn(name+" project rpm", 60, 120))
		g.line(`tpm = %d`, g.intn(name+" project tpm", 10_000, 50_000))
		if g.bool(name + " project max_concurrent") {
			g.line(`max_concurrent = 1`)
		}
	}
}

func (g *tomlGen) svc(label string) string {
	return g.services[g.intn(label, 0, len(g.services)-1)]
}

// route draws route r0 over the services, in a drawn order.
func (g *tomlGen) route() {
	g.routed = true
	deps := slices.Clone(g.services)
	if g.bool("route reversed") {
		slices.Reverse(deps)
	}
	deps = deps[:g.intn("route deployments", 1, len(deps))]
	g.line(``)
	g.line(`[routes.r0]`)
	g.line(`deployments = ["%s"]`, strings.Join(deps, `", "`))
	if g.bool("route policy") {
		g.line(`policy = "ordered"`)
	}
	if g.bool("route fall_back_after") {
		g.line(`fall_back_after = %s`, g.fallBackAfter("route fall_back_after value"))
	}
	if g.bool("route cooldown") {
		g.line(`cooldown_after = %d`, g.intn("route cooldown_after", 1, 4))
		g.line(`cooldown = %s`, g.ms("route cooldown value", 1, 3000))
	}
}

// fallBackAfter draws a fall-back threshold: "never", "0s" or a wait.
func (g *tomlGen) fallBackAfter(label string) string {
	switch g.intn(label, 0, 2) {
	case 0:
		return `"never"`
	case 1:
		return `"0s"`
	default:
		return g.ms(label+" ms", 1, 3000)
	}
}

func (g *tomlGen) toolsSection() {
	if g.chance("routes", 3) {
		g.route()
	}
	g.tools = []string{"t0", "t1", "t2"}
	for i, name := range g.tools {
		g.line(``)
		g.line(`[tools.%s]`, name)
		if g.routed && g.bool(name+" routed") {
			g.line(`service = "r0"`)
		} else {
			g.line(`service = %q`, g.svc(name+" service"))
		}
		if g.bool(name + " tokens") {
			g.line(`tokens = %s`, g.numDist(name+" tokens", 0, 2000))
		}
		if i > 0 && g.chance(name+" write", 2) {
			g.line(`kind = "write"`)
			if g.bool(name + " resource") {
				g.line(`resource = "notes"`)
			}
			if g.bool(name + " idempotent") {
				g.line(`idempotent = true`)
			}
			if g.chance(name+" resource_from", 3) {
				g.line(`resource_from = "json:note_id"`)
			}
		} else if g.bool(name + " read") {
			g.line(`kind = "read"`)
			if g.bool(name + " idempotent read") {
				g.line(`idempotent = true`)
				g.hedgeable = true
			}
		}
	}
}

// group draws the i-th entry of a calls list; emitted holds the tools the
// entries before it emit, which it may depend on.
func (g *tomlGen) group(label string, i int, emitted *[]string) string {
	var parts []string
	own := g.tools[min(i, len(g.tools)-1)]
	if g.chance(label+" mix", 3) {
		parts = append(parts, fmt.Sprintf(`mix = { t0 = %d, t1 = %d }`, g.intn(label+" w0", 1, 3), g.intn(label+" w1", 1, 3)))
		*emitted = append(*emitted, "t0", "t1")
	} else {
		parts = append(parts, fmt.Sprintf(`tool = %q`, own))
		var deps []string
		for _, e := range *emitted {
			if e != own {
				deps = append(deps, e)
			}
		}
		if len(deps) > 0 && g.chance(label+" after", 2) {
			parts = append(parts, fmt.Sprintf(`after = [%q]`, deps[g.intn(label+" after tool", 0, len(deps)-1)]))
		}
		*emitted = append(*emitted, own)
	}
	if g.bool(label + " count") {
		parts = append(parts, `count = `+g.numDist(label+" count", 0, 5))
	}
	if g.chance(label+" probability", 3) {
		parts = append(parts, `probability = `+g.frac(label+" probability value", 10, 100))
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

func (g *tomlGen) calls(label string) string {
	n := g.intn(label+" groups", 1, 3)
	var gs, emitted []string
	for i := range n {
		gs = append(gs, g.group(fmt.Sprintf("%s group %d", label, i), i, &emitted))
	}
	return "[ " + strings.Join(gs, ", ") + " ]"
}

// llmCall draws a model call; task says it is the workload's (only that
// one takes success and retries), growth that its context may grow.
func (g *tomlGen) llmCall(label string, task, growth bool) string {
	parts := []string{`service = "s0"`, `tokens = ` + g.numDist(label+" tokens", 1000, 3000)}
	if g.bool(label + " output_tokens") {
		parts = append(parts, `output_tokens = `+g.numDist(label+" output", 10, 400))
	}
	if task && g.chance(label+" success", 3) {
		parts = append(parts, `success = `+g.frac(label+" success value", 50, 100))
		if g.bool(label + " retries") {
			parts = append(parts, fmt.Sprintf(`retries = %d`, g.intn(label+" retries value", 0, 3)))
		}
	}
	if growth && g.bool(label+" context_growth") {
		parts = append(parts, fmt.Sprintf(`context_growth = %d`, g.intn(label+" growth", 0, 500)))
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

func (g *tomlGen) workloadTables() {
	g.line(``)
	g.line(`[workload]`)
	if g.sessions > 0 {
		g.line(`sessions = %d`, g.sessions)
	}
	if len(g.classes) > 0 {
		g.line(`classes = [ { name = "interactive", sessions = %d }, { name = "batch", sessions = %d } ]`, g.classA, g.sessions-g.classA)
	}
	if g.sessions > 0 {
		if g.bool("turns") {
			g.line(`turns = %d`, g.intn("turns value", 1, 6))
			g.turns = true
		}
		if g.bool("think") {
			g.line(`think = %s`, g.durDist("think", 0, 500))
		}
		if g.bool("ramp") {
			g.line(`ramp = %s`, g.ms("ramp value", 0, g.duration/2))
		}
	} else {
		g.line(`arrival_rate = "%d/s"`, g.intn("arrival_rate", 1, 15))
		if a := g.pick("arrival", "", "poisson", "constant"); a != "" {
			g.line(`arrival = %q`, a)
		}
	}
	if g.procs > 1 {
		if g.bool("processes key") {
			g.line(`processes = %d`, g.procs)
		}
		shares := make([]string, g.procs)
		for i := range shares {
			shares[i] = fmt.Sprint(g.intn("share", 1, 3))
		}
		g.line(`process_shares = [%s]`, strings.Join(shares, ", "))
	}
	if g.llm {
		g.line(`llm = %s`, g.llmCall("llm", true, g.turns))
	}
	g.line(`calls = %s`, g.calls("calls"))
	if g.chance("subagents", 4) {
		g.line(`[workload.subagents]`)
		g.line(`count = %s`, g.numDist("sub count", 0, 2))
		g.line(`max_iterations = %d`, g.intn("max_iterations", 1, 4))
		if g.bool("sub token_budget") {
			g.line(`token_budget = %d`, g.intn("sub token_budget value", 500, 10_000))
		}
		if g.bool("orchestrator_budget") {
			g.line(`orchestrator_budget = %d`, g.intn("orchestrator_budget value", 10_000, 40_000))
		}
		if g.bool("finish_probability") {
			g.line(`finish_probability = %s`, g.frac("finish", 0, 80))
		}
		if g.bool("sub llm") {
			g.line(`llm = %s`, g.llmCall("sub llm", false, true))
		}
		g.line(`calls = %s`, g.calls("sub calls"))
	}
	if g.chance("cancel", 3) {
		g.line(`[workload.cancel]`)
		if g.bool("cancel probability") {
			g.line(`probability = %s`, g.frac("cancel probability value", 1, 50))
			g.line(`after = %s`, g.durDist("cancel after", 50, 1500))
		}
		if g.bool("parent_timeout") {
			g.line(`parent_timeout = %s`, g.ms("parent_timeout value", 100, 2000))
		}
	}
}

func (g *tomlGen) strategy(i int) {
	name := fmt.Sprint("st", i)
	l := func(s string) string { return name + " " + s }
	g.line(``)
	g.line(`[[strategy]]`)
	g.line(`name = %q`, name)
	if g.chance(l("description"), 4) {
		g.line(`description = "generated"`)
	}
	if g.bool(l("max_in_flight")) {
		g.line(`max_in_flight = %d`, g.intn(l("max_in_flight value"), 1, 12))
	}
	if g.chance(l("per service"), 3) {
		var caps []string
		for _, s := range g.services {
			caps = append(caps, fmt.Sprintf("%s = %d", s, g.intn(l("cap "+s), 1, 8)))
		}
		g.line(`max_in_flight_per_service = { %s }`, strings.Join(caps, ", "))
	}
	if g.chance(l("batch_turns"), 5) {
		g.line(`batch_turns = %d`, g.intn(l("batch_turns value"), 1, 3))
	}
	if g.chance(l("progressive_join"), 3) {
		late := ""
		if lt := g.pick(l("late"), "", "fold", "drop"); lt != "" {
			late = fmt.Sprintf(`, late = %q`, lt)
		}
		if g.bool(l("join first")) {
			g.line(`progressive_join = { first = %d%s }`, g.intn(l("first"), 1, 4), late)
		} else {
			g.line(`progressive_join = { share = %s%s }`, g.frac(l("share"), 30, 100), late)
		}
	}
	bucket := g.bool(l("token_bucket"))
	if bucket {
		g.line(`token_bucket = true`)
		if g.bool(l("headroom")) {
			g.line(`headroom = %s`, g.frac(l("headroom value"), 50, 100))
		}
	}
	if g.chance(l("serialize_writes"), 3) {
		g.line(`serialize_writes = %v`, g.bool(l("serialize_writes value")))
	}
	if g.chance(l("keep_slot"), 4) {
		g.line(`keep_slot_during_backoff = true`)
	}
	if g.chance(l("pause"), 4) {
		g.line(`pause_on_retry_after = true`)
	}
	if !g.recommend && g.chance(l("recommend"), 6) {
		g.recommend = true
		g.line(`recommend = true`)
	}
	if g.chance(l("fan_out"), 4) {
		g.line(`fan_out = %d`, g.intn(l("fan_out value"), 1, 4))
		g.line(`fan_out_mode = %q`, g.pick(l("fan_out_mode"), "batch", "truncate"))
	}
	if j := g.pick(l("join"), "", "", "partial", "all-or-nothing"); j != "" {
		g.line(`join = %q`, j)
	}
	// Timeouts nest: an attempt's within its call's, a call's within its turn's.
	floor := 100
	if g.chance(l("attempt_timeout"), 3) {
		floor = g.intn(l("attempt_timeout value"), floor, 1500)
		g.line(`attempt_timeout = "%dms"`, floor)
	}
	if g.chance(l("call_timeout"), 4) {
		floor = g.intn(l("call_timeout value"), floor, floor+2000)
		g.line(`call_timeout = "%dms"`, floor)
	}
	if g.routed && g.chance(l("fall_back_after"), 3) {
		g.line(`fall_back_after = %s`, g.fallBackAfter(l("fall_back_after value")))
	}
	if g.chance(l("turn_timeout"), 4) {
		g.line(`turn_timeout = "%dms"`, g.intn(l("turn_timeout value"), floor, floor+3000))
	}
	if g.chance(l("token_budget"), 4) {
		g.line(`token_budget = %d`, g.intn(l("token_budget value"), 100, 5000))
	}
	if g.chance(l("attempt_budget"), 4) {
		g.line(`attempt_budget = %d`, g.intn(l("attempt_budget value"), 1, 10))
	}
	if g.chance(l("max_queued"), 4) {
		g.line(`max_queued = %d`, g.intn(l("max_queued value"), 1, 20))
	}
	if c := g.pick(l("cancel_at"), "", "transport", "reader"); c != "" {
		g.line(`cancel_at = %q`, c)
	}
	if g.procs > 1 && bucket && g.bool(l("quota")) {
		switch g.pick(l("quota mode"), "full", "split", "shared") {
		case "full":
			g.line(`quota = { mode = "full" }`)
		case "split":
			g.line(`quota = { mode = "split" }`)
		default:
			parts := []string{`mode = "shared"`, `rtt = ` + g.ms(l("rtt"), 1, 5)}
			if g.bool(l("lease")) {
				parts = append(parts, `lease = `+g.ms(l("lease value"), 50, 500), `lease_max = `+g.frac(l("lease_max"), 10, 100))
			}
			if g.bool(l("quota timeout")) {
				parts = append(parts, `timeout = `+g.ms(l("quota timeout value"), 1, 20))
			}
			if g.bool(l("probe_every")) {
				parts = append(parts, `probe_every = `+g.ms(l("probe_every value"), 100, 1000))
			}
			if f := g.pick(l("fallback"), "", "local", "closed"); f != "" {
				parts = append(parts, fmt.Sprintf(`fallback = %q`, f))
			}
			if g.bool(l("outage")) {
				from := g.intn(l("outage_at"), 0, g.duration/2)
				parts = append(parts, fmt.Sprintf(`outage_at = "%dms"`, from), fmt.Sprintf(`outage_for = "%dms"`, g.intn(l("outage_for"), 1, g.duration-from)))
				if o := g.pick(l("outage kind"), "", "down", "hung"); o != "" {
					parts = append(parts, fmt.Sprintf(`outage = %q`, o))
				}
			}
			g.line(`quota = { %s }`, strings.Join(parts, ", "))
		}
	} else if g.chance(l("quota full"), 8) {
		g.line(`quota = { mode = "full" }`)
	}
	if g.chance(l("adaptive"), 4) {
		algo := g.pick(l("algorithm"), "aimd", "gradient")
		parts := []string{fmt.Sprintf(`algorithm = %q`, algo)}
		lo := g.intn(l("adaptive min"), 1, 3)
		hi := g.intn(l("adaptive max"), lo+1, 10)
		parts = append(parts, fmt.Sprintf("initial = %d, min = %d, max = %d", g.intn(l("initial"), lo, hi), lo, hi))
		if g.bool(l("decrease")) {
			parts = append(parts, `decrease = `+g.frac(l("decrease value"), 30, 90))
		}
		if algo == "gradient" {
			if g.bool(l("smoothing")) {
				parts = append(parts, `smoothing = `+g.frac(l("smoothing value"), 5, 90))
			}
			if g.bool(l("tolerance")) {
				parts = append(parts, fmt.Sprintf(`tolerance = %d`, g.intn(l("tolerance value"), 1, 3)))
			}
			if g.bool(l("long_window")) {
				parts = append(parts, fmt.Sprintf(`long_window = %d`, g.intn(l("long_window value"), 10, 200)))
			}
			if g.bool(l("queue_size")) {
				parts = append(parts, fmt.Sprintf(`queue_size = %d`, g.intn(l("queue_size value"), 1, 4)))
			}
		}
		if g.bool(l("adaptive services")) {
			parts = append(parts, fmt.Sprintf(`services = [%q]`, g.svc(l("adaptive service"))))
		}
		g.line(`adaptive = { %s }`, strings.Join(parts, ", "))
	}
	if g.chance(l("retry_budget"), 4) {
		g.line(`retry_budget = { ratio = %s, min_per_s = %d, max = %d }`, g.frac(l("ratio"), 5, 50), g.intn(l("min_per_s"), 0, 3), g.intn(l("rb max"), 1, 20))
	}
	if bucket && g.chance(l("header_sync"), 4) {
		g.line(`header_sync = true`)
	}
	if len(g.classes) > 0 && g.bool(l("priority")) {
		first, second := "interactive", "batch"
		if g.bool(l("priority order")) {
			first, second = second, first
		}
		g.line(`priority = [ { class = %q }, { class = %q, share = %s } ]`, first, second, g.frac(l("priority share"), 0, 50))
	}
	if g.hedgeable && g.chance(l("hedge"), 4) {
		if g.bool(l("hedge_after")) {
			g.line(`hedge_after = %s`, g.ms(l("hedge_after value"), 20, 400))
		} else {
			g.line(`hedge_percentile = %s`, g.frac(l("hedge_percentile value"), 50, 99))
		}
		if g.bool(l("hedge_budget")) {
			g.line(`hedge_budget = %s`, g.frac(l("hedge_budget value"), 5, 100))
		}
	}
	if g.bool(l("retry")) {
		g.line(`[strategy.retry]`)
		g.line(`backoff = %q`, g.pick(l("backoff"), "none", "constant", "exponential", "full-jitter", "equal-jitter", "decorrelated-jitter"))
		g.line(`base = %s`, g.ms(l("base"), 10, 300))
		if g.bool(l("cap")) {
			g.line(`cap = %s`, g.ms(l("cap value"), 300, 3000))
		}
		g.line(`attempts = %d`, g.intn(l("attempts"), 1, 6))
		if g.chance(l("retry budget"), 4) {
			g.line(`budget = %s`, g.ms(l("retry budget value"), 200, 5000))
		}
		if g.bool(l("honor_retry_after")) {
			honor := g.bool(l("honor value"))
			g.line(`honor_retry_after = %v`, honor)
			if honor && g.chance(l("retry_after_jitter"), 3) {
				g.line(`retry_after_jitter = %s`, g.ms(l("retry_after_jitter value"), 0, 500))
			}
			if honor && g.chance(l("max_retry_after"), 3) {
				g.line(`max_retry_after = %s`, g.ms(l("max_retry_after value"), 500, 5000))
				g.line(`over_max_retry_after = %q`, g.pick(l("over"), "clamp", "fail"))
			}
		}
	}
}

// events draws timed events one after another, so that none overlaps.
func (g *tomlGen) events() {
	at := 0
	for i := range g.intn("events", 0, 3) {
		l := func(s string) string { return fmt.Sprintf("event %d %s", i, s) }
		at += g.intn(l("at"), 0, 1500)
		span := min(g.intn(l("for"), 100, 1500), g.duration-at)
		if span <= 0 {
			return
		}
		g.line(``)
		g.line(`[[events]]`)
		si := g.intn(l("service"), 0, len(g.services)-1)
		g.line(`service = %q`, g.services[si])
		g.line(`at = "%dms"`, at)
		g.line(`for = "%dms"`, span)
		at += span
		switch g.pick(l("kind"), "change", "limits", "stall", "outage") {
		case "change":
			if g.limited[si] && g.bool(l("limit_factor")) {
				g.line(`limit_factor = %s`, g.frac(l("limit_factor value"), 10, 200))
			}
			if g.bool(l("latency_factor")) {
				g.line(`latency_factor = %s`, g.frac(l("latency_factor value"), 50, 400))
			}
			if g.bool(l("error_rate")) {
				g.line(`error_rate = %s`, g.frac(l("error_rate value"), 0, 50))
			}
			g.line(`overload_rate = %s`, g.frac(l("overload_rate value"), 0, 50))
		case "limits":
			g.line(`rps = %d`, g.intn(l("rps"), 1, 20))
			if g.bool(l("rpm")) {
				g.line(`rpm = %d`, g.intn(l("rpm value"), 60, 1200))
			}
			if g.bool(l("tpm")) {
				g.line(`tpm = %d`, g.intn(l("tpm value"), 10_000, 100_000))
			}
			if g.bool(l("max_concurrent")) {
				g.line(`max_concurrent = %d`, g.intn(l("max_concurrent value"), 1, 4))
			}
		case "stall":
			g.line(`stall = true`)
		default:
			g.line(`outage = true`)
		}
	}
}

func (g *tomlGen) check() {
	g.line(``)
	g.line(`[check]`)
	g.line(`max_in_flight = { %s = 8 }`, g.services[0])
	g.line(`rate_limited_warn = 0.02`)
	g.line(`rate_limited_fail = 0.2`)
	g.line(`early_retries = 1`)
	g.line(`jitter_window = "50ms"`)
	g.line(`jitter_min_spread = "30ms"`)
	g.line(`jitter_min_share = 0.2`)
	g.line(`attempts_warn = 4`)
	g.line(`attempts_fail = 8`)
	g.line(`abandoned = 2`)
	g.line(`non_retryable = 1`)
	g.line(`answer_gap_warn = "20s"`)
	g.line(`answer_gap_fail = "1m"`)
	g.line(`attempt_timeout = "2s"`)
	if g.bool("check.gateway") {
		// check --gateway's declared limits: the engines never read them,
		// but a generated file that sets them must still load and run alike.
		g.line(``)
		g.line(`[check.gateway]`)
		g.line(`service = %q`, g.services[0])
		g.line(`window = "%ds"`, g.intn("gateway window", 1, 60))
		g.line(`max_ratio = 1.%d`, g.intn("gateway max_ratio", 0, 9))
		g.line(`keys = { %q = { rpm = %d, tpm = "%d/s" } }`, g.pick("gateway key", "sk-a", "sk-team-b"), g.intn("gateway rpm", 1, 1000), g.intn("gateway tpm", 1, 10_000))
	}
}
