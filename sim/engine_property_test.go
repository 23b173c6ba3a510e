package sim

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/spec"
)

// randomScenario draws a small scenario touching every part of the engine:
// closed or open workloads, a model call, tool mixes and dependencies,
// subagents, user cancels and parent timeouts, faults, and strategies with
// caps, buckets, retries, fan-out, budgets and timeouts.
func randomScenario(t *rapid.T) *scenarios.Scenario { return randomScenarioUpTo(t, 15*time.Second) }

// randomScenarioUpTo is randomScenario with a duration from 2 s up to
// longest: the regular suite keeps runs short, the long one (build tag
// long) soaks them for a minute.
func randomScenarioUpTo(t *rapid.T, longest time.Duration) *scenarios.Scenario {
	ms := func(name string, lo, hi int) time.Duration {
		return time.Duration(rapid.IntRange(lo, hi).Draw(t, name)) * time.Millisecond
	}
	sc := &scenarios.Scenario{Name: "random", Seed: rapid.Uint64().Draw(t, "seed"), Duration: ms("duration", 2_000, int(longest/time.Millisecond))}
	nsvc := rapid.IntRange(1, 2).Draw(t, "services")
	for i := range nsvc {
		svc := scenarios.Service{
			Name:              fmt.Sprint("s", i),
			RequestsPerSecond: float64(rapid.IntRange(0, 20).Draw(t, "rps")),
			TokensPerMinute:   float64(rapid.IntRange(0, 1).Draw(t, "has tpm") * 200_000),
			MaxConcurrent:     rapid.IntRange(0, 8).Draw(t, "max concurrent"),
			Latency:           spec.Dist[time.Duration]{Kind: spec.DistUniform, Min: ms("lat min", 10, 100), Max: ms("lat max", 100, 800)},
			Headers:           rapid.SampledFrom([]spec.HeaderStyle{spec.HeadersOpenAI, spec.HeadersAnthropic, spec.HeadersNone}).Draw(t, "headers"),
			Limiter:           rapid.SampledFrom([]spec.Algorithm{spec.TokenBucket, spec.FixedWindow, spec.SlidingWindow}).Draw(t, "limiter"),
			Faults: spec.Faults{
				ErrorRate: float64(rapid.IntRange(0, 10).Draw(t, "error %")) / 100,
				HangRate:  float64(rapid.IntRange(0, 5).Draw(t, "hang %")) / 100,
				ResetRate: float64(rapid.IntRange(0, 5).Draw(t, "reset %")) / 100,
			},
		}
		if svc.Limiter != spec.TokenBucket {
			svc.Burst = 0
		}
		sc.Services = append(sc.Services, svc)
	}
	for i := range 3 {
		sc.Tools = append(sc.Tools, scenarios.Tool{
			Name: fmt.Sprint("t", i), Service: fmt.Sprint("s", rapid.IntRange(0, nsvc-1).Draw(t, "tool service")),
			Tokens: spec.Constant(float64(rapid.IntRange(0, 2000).Draw(t, "tokens"))),
			Kind:   rapid.SampledFrom([]scenarios.Kind{scenarios.KindRead, scenarios.KindWrite}).Draw(t, "kind"),
		})
		sc.Tools[i].Idempotent = sc.Tools[i].Kind == scenarios.KindWrite && rapid.Bool().Draw(t, "idempotent")
	}
	group := func(i int) scenarios.CallGroup {
		g := scenarios.CallGroup{Tool: fmt.Sprint("t", i), Count: spec.Constant(float64(rapid.IntRange(0, 6).Draw(t, "count"))), Probability: 1}
		if i > 0 && rapid.Bool().Draw(t, "after") {
			g.After = []string{fmt.Sprint("t", rapid.IntRange(0, i-1).Draw(t, "after tool"))}
		}
		return g
	}
	w := &sc.Workload
	for i := range rapid.IntRange(1, 3).Draw(t, "groups") {
		w.Calls = append(w.Calls, group(i))
	}
	if rapid.Bool().Draw(t, "closed") {
		w.Sessions = rapid.IntRange(1, 6).Draw(t, "sessions")
		w.Think = spec.Constant(ms("think", 0, 500))
		w.Ramp = ms("ramp", 0, 5000)
	} else {
		w.Arrival = scenarios.ArrivalPoisson
		w.ArrivalRate = float64(rapid.IntRange(1, 10).Draw(t, "arrivals/s"))
	}
	if rapid.Bool().Draw(t, "llm") {
		w.LLM = &scenarios.LLMCall{Service: "s0", Tokens: spec.Constant(500.0)}
	}
	if rapid.IntRange(0, 3).Draw(t, "subagents") == 0 {
		w.Subagents = &scenarios.Subagents{
			Count: spec.Constant(float64(rapid.IntRange(1, 3).Draw(t, "subagent count"))), MaxIterations: rapid.IntRange(1, 3).Draw(t, "iterations"),
			TokenBudget: int64(rapid.IntRange(0, 5000).Draw(t, "subagent budget")), FinishProbability: 0.3,
			Calls: []scenarios.CallGroup{group(0)},
		}
	}
	if rapid.Bool().Draw(t, "cancels") {
		w.Cancel = scenarios.Cancel{Probability: 0.2, After: spec.Constant(ms("cancel after", 50, 2000)), ParentTimeout: ms("parent timeout", 0, 5000)}
	}
	sc.Strategies = []scenarios.Strategy{{
		Name: "st", MaxInFlight: rapid.IntRange(0, 8).Draw(t, "cap"), TokenBucket: rapid.Bool().Draw(t, "bucket"), Headroom: 0.9,
		SerializeWrites: rapid.Bool().Draw(t, "serialize"), KeepSlotDuringBackoff: rapid.Bool().Draw(t, "keep slot"),
		PauseOnRetryAfter: rapid.Bool().Draw(t, "pause"), FanOut: rapid.IntRange(0, 4).Draw(t, "fan-out"),
		FanOutMode:     rapid.SampledFrom(sched.FanOutModes()).Draw(t, "fan-out mode"),
		Join:           rapid.SampledFrom(sched.JoinModes()).Draw(t, "join"),
		AttemptTimeout: ms("attempt timeout", 0, 1500), TurnTimeout: ms("turn timeout", 0, 6000),
		AttemptBudget: rapid.IntRange(0, 10).Draw(t, "attempt budget"),
		CancelAt:      rapid.SampledFrom([]scenarios.CancelAt{scenarios.CancelAtTransport, scenarios.CancelAtReader}).Draw(t, "cancel at"),
		Retry: scenarios.Retry{
			Backoff: rapid.SampledFrom(sched.Backoffs()).Draw(t, "backoff"), Base: ms("base", 0, 500), Cap: 5 * time.Second,
			Attempts: rapid.IntRange(1, 4).Draw(t, "attempts"), HonorRetryAfter: rapid.Bool().Draw(t, "honor"),
		},
	}}
	// Several processes sharing the services, under each quota mode.
	if n := rapid.IntRange(1, 3).Draw(t, "processes"); n > 1 {
		w.Processes = n
		if rapid.Bool().Draw(t, "uneven") {
			for range n {
				w.ProcessShares = append(w.ProcessShares, float64(rapid.IntRange(1, 4).Draw(t, "share")))
			}
		}
	}
	st := &sc.Strategies[0]
	st.Quota.Mode = rapid.SampledFrom([]string{scenarios.QuotaFull, scenarios.QuotaSplit, scenarios.QuotaShared}).Draw(t, "quota")
	if st.Quota.Mode == scenarios.QuotaSplit && !st.TokenBucket {
		st.Quota.Mode = scenarios.QuotaFull
	}
	if st.Quota.Mode == scenarios.QuotaShared {
		st.Quota.RTT = ms("rtt", 0, 5)
		if rapid.Bool().Draw(t, "lease") {
			st.Quota.Lease, st.Quota.LeaseMax = ms("lease", 50, 500), 0.5
		}
	}
	return sc
}

// TestEngineProperties runs random scenarios: every run ends with its books
// balanced — no attempt or call left in flight once every turn finished,
// Little's law on the calls, one result per call — and a rerun gives the
// same figures.
func TestEngineProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) { checkEngineProperties(rt, randomScenario(rt)) })
}

// checkEngineProperties runs sc and checks the books, Little's law and a
// rerun (see TestEngineProperties).
func checkEngineProperties(rt *rapid.T, sc *scenarios.Scenario) {
	run := func() (*engine, results.StrategyResult) {
		e, err := NewEngine(sc, &sc.Strategies[0])
		if err != nil {
			rt.Fatal(err)
		}
		// Drain past the end, so that the books can be checked with every
		// turn finished; what finishes after the end is unfinished.
		e.stop = DrainLimit(e.end)
		if !e.Run(context.Background(), nil) {
			rt.Fatal("run did not complete")
		}
		return e, e.result()
	}
	e, r := run()
	m := e.m
	if m.Unfinished > 0 {
		// Only the drain limit (more work than the run can finish) or a
		// request the service never answers, with nothing to time it
		// out, may leave a turn running at the end.
		hangs := false
		for _, svc := range sc.Services {
			hangs = hangs || svc.Faults.HangRate > 0
		}
		st := &sc.Strategies[0]
		timeouts := st.AttemptTimeout > 0 || st.TurnTimeout > 0 || sc.Workload.Cancel.ParentTimeout > 0
		if !e.cutOff && (!hangs || timeouts) {
			rt.Fatalf("%d turns never finished", m.Unfinished)
		}
		return
	}
	for p := range e.procs {
		if c := e.procs[p].core; m.InSystem != 0 || m.Total != 0 || c.InFlight() != 0 || c.Turns() != 0 {
			rt.Fatalf("left behind: %d calls in the system, %d attempts in flight, process %d's core %d slots %d turns", m.InSystem, m.Total, p, c.InFlight(), c.Turns())
		}
	}
	if held := len(e.credits) - len(e.freeQ); held != 0 {
		rt.Fatalf("left behind: %d requests for credit from the shared quota", held)
	}
	if e.multi {
		var turns, calls int64
		for _, p := range r.Processes {
			turns += p.Turns
			calls += p.Calls
		}
		if turns != r.Turns || calls != r.Calls {
			rt.Fatalf("the processes ran %d turns and %d calls, the strategy %d and %d", turns, calls, r.Turns, r.Calls)
		}
	}
	var apc int64
	for _, n := range r.AttemptsPerCall {
		apc += n
	}
	if apc > r.Calls || r.Failed > r.Calls || r.FailedTurns > r.Turns {
		rt.Fatalf("inconsistent counts: %+v", r)
	}
	if n := m.Calls + m.LateCalls; n > 0 && e.now > 0 {
		m.Integrate(e.now)
		l := m.Area / e.now.Seconds()
		lw := float64(n) / e.now.Seconds() * (m.CallSum / float64(n))
		if math.Abs(l-lw) > 1e-6*math.Max(1, lw) {
			rt.Fatalf("Little's law: L = %v, λW = %v", l, lw)
		}
	}
	_, again := run()
	if fmt.Sprint(again) != fmt.Sprint(r) {
		rt.Fatal("a rerun of the same scenario and seed differs")
	}
}
