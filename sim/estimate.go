package sim

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
)

// DefaultMaxMemory is the memory budget of a run, in bytes, when
// Options.MaxMemory is 0: 4 GiB.
const DefaultMaxMemory int64 = 4 << 30

// Bytes of live engine state, measured by BenchmarkLiveMemory (amd64,
// Go 1.26) as the heap a run holds with every call in flight at the fake
// service, after a full garbage collection: about 593 B per call in flight
// (the sched core's call state and result, the call and its payload, the
// fake service's slot, the engine's attempt and response event; 523 B
// before a call's Result and Action named the deployment of a route), 532 B
// per turn in progress beyond its calls (the agent loop's turn and part), 77 B
// per closed-model session and 1,031 KB per strategy (most of it its three
// latency HdrHistograms, about 410 KB of counters each). The constants
// round those up.
const (
	// BytesPerCall is one call in progress.
	BytesPerCall = 608
	// bytesPerTurn is one agent turn in progress, beyond its calls.
	bytesPerTurn = 544
	// bytesPerSession is one closed-model session.
	bytesPerSession = 96
	// bytesPerStrategy is one strategy's fixed state: histograms, service
	// models, timeline, results.
	bytesPerStrategy = 1280 << 10
)

// eventsPerCall is the engine's events per tool call, measured on
// BenchmarkEngine's scenario (≈ 1.1: each call's response, the turn's
// arrival and the scheduler's wake-ups), rounded up for retries.
const eventsPerCall = 1.5

// ErrTooLarge is the error of a run that would need more memory than its
// budget (Options.MaxMemory): Run returns a *TooLargeError, which wraps it,
// before it allocates anything; a turn that draws more calls than fit the
// budget stops a run under way with an error wrapping it. It is the agent
// loop's error (agent.ErrTooLarge), the same value.
var ErrTooLarge = agent.ErrTooLarge

// TooLargeError is Run's refusal of a run whose estimate passes the budget.
type TooLargeError struct {
	// Estimate is the run's estimate; Budget the memory budget, in bytes.
	Estimate RunEstimate
	Budget   int64
}

// Error states the estimate, the budget and what to change.
func (e *TooLargeError) Error() string {
	x := &e.Estimate
	return fmt.Sprintf("sim: the run would need about %s of memory (%s calls live at once; %s turns and %s calls per strategy, %d strategies, %d at once), above the budget of %s: shorten the run, lower sessions, rates or call counts, run fewer strategies at once, or raise the budget",
		bytesString(x.PeakBytes), count(x.LiveCalls), count(x.Turns), count(x.Calls), x.Strategies, x.Parallel, bytesString(float64(e.Budget)))
}

// Unwrap returns ErrTooLarge.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// RunEstimate is what a run is expected to take, from the scenario's
// workload arithmetic alone, before anything is simulated. Figures are
// expectations (means of the distributions) and floats, so that absurd
// scenarios give +Inf rather than a wrapped integer.
type RunEstimate struct {
	// Strategies is the strategies the run simulates; Parallel how many at once.
	Strategies, Parallel int
	// Turns is the agent turns expected per strategy (at most: a strategy
	// that falls behind in the closed model completes fewer).
	Turns float64
	// CallsPerTurn is the calls one turn makes: model calls, tool calls and
	// its subagents' calls.
	CallsPerTurn float64
	// Calls is the calls expected per strategy (Turns × CallsPerTurn).
	Calls float64
	// Events is the engine events expected over all strategies, a measure
	// of the run's CPU time.
	Events float64
	// LiveCalls is the most calls expected in progress at once in the
	// busiest strategy: every session's turn in the closed model; in the
	// open model, the arrival rate times a turn's time (Little's law), plus
	// the backlog a strategy that cannot keep up builds over the run.
	LiveCalls float64
	// PeakBytes is the approximate peak of live memory, in bytes, over the
	// strategies simulated at once. The Go heap can grow past the live
	// memory by the garbage collector's headroom (GOGC) unless a memory
	// limit (debug.SetMemoryLimit) holds it.
	PeakBytes float64
}

// Estimate returns the expected size of a run of sc under opts, and an
// error when opts names an unknown strategy. It simulates nothing.
func Estimate(sc *scenarios.Scenario, opts Options) (RunEstimate, error) {
	sc, err := opts.Apply(sc)
	if err != nil {
		return RunEstimate{}, err
	}
	return estimate(sc, parallel(opts, len(sc.Strategies))), nil
}

// parallel is the number of strategies a run simulates at once.
func parallel(opts Options, n int) int {
	par := opts.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	return max(1, min(par, n))
}

// Budget returns the memory budget of a run in bytes (≤ 0: none).
func (o *Options) Budget() int64 {
	if o.MaxMemory == 0 {
		return DefaultMaxMemory
	}
	return o.MaxMemory
}

// MaxTurnCalls is the most calls one turn may draw under a memory budget.
func MaxTurnCalls(budget int64) int {
	if budget <= 0 {
		return math.MaxInt
	}
	return int(max(1, budget/BytesPerCall))
}

// estimator holds a scenario's per-service figures.
type estimator struct {
	sc      *scenarios.Scenario
	latency []float64 // mean service time per service, seconds
	demand  []float64 // calls per turn per service
	tokens  []float64 // tokens per turn per service
	perTurn float64   // calls per turn
	live    float64   // calls of one turn in progress at once, at most
	turnS   float64   // seconds a turn takes when nothing waits
}

func estimate(sc *scenarios.Scenario, par int) RunEstimate {
	x := newEstimator(sc)
	w := &sc.Workload
	dur := sc.Duration.Seconds()
	est := RunEstimate{Strategies: len(sc.Strategies), Parallel: par, CallsPerTurn: x.perTurn}
	if w.Sessions > 0 {
		cycle := max(x.turnS+meanOf(w.Think)/1e9, agent.MinTurnGap.Seconds())
		per := math.Ceil(dur / cycle)
		if w.Turns > 0 {
			per = min(per, float64(w.Turns))
		}
		est.Turns = float64(w.Sessions) * per
	} else {
		est.Turns = w.ArrivalRate*dur + 1
	}
	est.Calls = est.Turns * x.perTurn
	est.Events = est.Calls * eventsPerCall * float64(len(sc.Strategies))
	bytes := make([]float64, len(sc.Strategies))
	for i := range sc.Strategies {
		turns := x.liveTurns(&sc.Strategies[i], est.Turns)
		est.LiveCalls = max(est.LiveCalls, turns*x.live)
		bytes[i] = turns*(bytesPerTurn+x.live*BytesPerCall) + float64(w.Sessions)*bytesPerSession + bytesPerStrategy
	}
	slices.Sort(bytes)
	for _, b := range bytes[max(0, len(bytes)-par):] {
		est.PeakBytes += b
	}
	return est
}

func newEstimator(sc *scenarios.Scenario) *estimator {
	x := &estimator{sc: sc, latency: make([]float64, len(sc.Services)),
		demand: make([]float64, len(sc.Services)), tokens: make([]float64, len(sc.Services))}
	for i := range sc.Services {
		svc := &sc.Services[i]
		lat := meanOf(svc.Latency)
		if !slices.ContainsFunc(sc.Strategies, func(st scenarios.Strategy) bool { return st.Hedge != nil }) {
			// A hedging strategy may cut the slow answers short: for an
			// upper bound of the turns, count them only without one.
			lat += svc.Faults.SlowFirstByte.Rate * float64(svc.Faults.SlowFirstByte.Delay)
		}
		if g := svc.Generation.TTFT; g.Kind != "" {
			// The simulated calls ask for no output tokens: time to first
			// token is all generation adds.
			lat += meanOf(g)
		}
		x.latency[i] = max(lat/1e9, 1e-9)
	}
	w := &sc.Workload
	// own: one turn's own calls, before any subagent.
	own, ownS := x.groups(w.Calls, 1)
	llm, llmS := x.llm(w.LLM, 1)
	x.perTurn = own + llm
	x.live = max(own, llm)
	x.turnS = ownS + llmS
	if s := w.Subagents; s != nil {
		n := meanOf(s.Count)
		iters := float64(s.MaxIterations)
		if p := s.FinishProbability; p > 0 {
			iters = min(iters, (1-math.Pow(1-p, iters))/p)
		}
		calls, callsS := x.groups(s.Calls, n*iters)
		sllm, sllmS := x.llm(s.LLM, n*iters)
		x.perTurn += calls + sllm
		// Subagents run side by side; each has one part in progress.
		x.live = max(x.live, max(calls, sllm)/max(iters, 1))
		x.turnS += iters * (callsS + sllmS)
	}
	return x
}

// groups adds the calls of groups, made times per turn, to the services'
// demand, and returns the calls per turn and the seconds one round of them
// takes (its slowest service).
func (x *estimator) groups(gs []scenarios.CallGroup, times float64) (calls, seconds float64) {
	for _, g := range gs {
		p := g.Probability
		if p <= 0 || times == 0 {
			continue
		}
		n := meanOf(g.Count) * p
		if n == 0 {
			continue
		}
		calls += n * times
		tools := []string{g.Tool}
		weights := []float64{1}
		if g.Tool == "" {
			tools, weights = nil, nil
			var total float64
			for _, m := range g.Mix {
				total += m.Weight
			}
			for _, m := range g.Mix {
				tools = append(tools, m.Tool)
				weights = append(weights, m.Weight/total)
			}
		}
		for k, name := range tools {
			t := x.sc.Tool(name)
			if t == nil {
				continue
			}
			if i := agent.ServiceIndex(x.sc, t.Service); i >= 0 {
				x.demand[i] += n * times * weights[k]
				x.tokens[i] += n * times * weights[k] * meanOf(t.Tokens)
				seconds = max(seconds, x.latency[i])
			}
		}
	}
	return calls, seconds
}

// llm adds a model call made times per turn to its service's demand.
func (x *estimator) llm(l *scenarios.LLMCall, times float64) (calls, seconds float64) {
	if l == nil || times == 0 {
		return 0, 0
	}
	if i := agent.ServiceIndex(x.sc, l.Service); i >= 0 {
		x.demand[i] += times
		x.tokens[i] += times * meanOf(l.Tokens)
		seconds = x.latency[i]
	}
	return times, seconds
}

// liveTurns is the most turns in progress at once under strategy st, out of
// turns over the run.
func (x *estimator) liveTurns(st *scenarios.Strategy, turns float64) float64 {
	w := &x.sc.Workload
	if w.Sessions > 0 {
		return float64(w.Sessions)
	}
	rate := w.ArrivalRate
	// Little's law for a strategy that keeps up, plus the backlog of one
	// that does not, which grows over the whole run.
	live := rate * x.turnS
	if c := x.capacity(st); rate > c {
		live += (rate - c) * x.sc.Duration.Seconds()
	}
	for _, d := range []time.Duration{st.TurnTimeout, w.Cancel.ParentTimeout} {
		if d > 0 {
			live = min(live, rate*d.Seconds()+1)
		}
	}
	return min(max(live, 1), turns)
}

// capacity is the turns per second strategy st sustains: the least over its
// concurrency caps and the services' limits.
func (x *estimator) capacity(st *scenarios.Strategy) float64 {
	turns := math.Inf(1)
	var work float64 // seconds of service per turn, over every service
	for i := range x.sc.Services {
		d := x.demand[i]
		if d <= 0 {
			continue
		}
		svc := &x.sc.Services[i]
		lat := x.latency[i]
		work += d * lat
		calls := math.Inf(1) // per second
		if n := st.MaxInFlightPerService[svc.Name]; n > 0 {
			calls = min(calls, float64(n)/lat)
		}
		if n := svc.MaxConcurrent; n > 0 {
			calls = min(calls, float64(n)/lat)
		}
		if r := svc.RequestsPerSecond; r > 0 {
			calls = min(calls, r)
		}
		if r := svc.RequestsPerMinute; r > 0 {
			calls = min(calls, r/60)
		}
		if r := svc.TokensPerMinute; r > 0 && x.tokens[i] > 0 {
			calls = min(calls, r/60/(x.tokens[i]/d))
		}
		turns = min(turns, calls/d)
	}
	if st.MaxInFlight > 0 && work > 0 {
		turns = min(turns, float64(st.MaxInFlight)/work)
	}
	return turns
}

// meanOf returns a distribution's mean, no more than its cap when it has
// one (in the distribution's unit: nanoseconds for durations).
func meanOf[T time.Duration | float64](d spec.Dist[T]) float64 {
	m := setup.NewSampler(d).Mean()
	if d.Max > 0 && d.Kind != spec.DistUniform {
		m = min(m, float64(d.Max))
	}
	if math.IsNaN(m) || m < 0 {
		return 0
	}
	return m
}

// count formats a figure for an error message.
func count(f float64) string {
	switch {
	case math.IsInf(f, 0) || f >= 1e15:
		return fmt.Sprintf("%.3g", f)
	case f >= 1e6:
		return fmt.Sprintf("%.1fM", f/1e6)
	}
	return fmt.Sprintf("%.0f", f)
}

// bytesString formats a number of bytes in binary units.
func bytesString(b float64) string {
	switch {
	case math.IsInf(b, 0) || b >= 1<<60:
		return fmt.Sprintf("%.3g bytes", b)
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", b/(1<<10))
}
