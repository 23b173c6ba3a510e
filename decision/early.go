package decision

// Early stopping: a run of a strategy as written that can no longer meet
// the rule, whatever the rest of it does, is stopped there.
//
// The certainty is a count. A run's answered share is A ÷ (A + F) over the
// turns that ended within its duration, A answered and F failed (turns
// still running at the end are left out). Turns answered after time T
// are at most the turns running at T (one per session in a closed
// workload) plus the turns begun after T that get every call answered;
// each of those has at least m calls, each needing a request the service
// admits after T, and the service's request limit admits at most a known
// number X of requests over the rest of the run (a token bucket its
// capacity plus its rate times the time left; a fixed or sliding window
// its limit per window touched). So the final share is at most
// (A + M) ÷ (A + F + M), M = sessions + ⌈X ÷ m⌉, and when that is below
// MinAnsweredShare the run cannot meet the rule: its p95 time to answer
// falls among the unanswered turns (Unanswered), so it scores +Inf on the
// p95 objective, as the whole run would. The decision reads nothing else
// of a strategy as written it does not tune; one it goes on to tune is run
// again to its end first (complete).

import (
	"fmt"
	"math"
	"time"

	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/spec"
)

// earlyStopKey names the rule of early stopping for the run cache: a run
// that may stop is kept apart from the whole one. Change it when the
// rule changes.
const earlyStopKey = "decision: answered share certainly below 0.95, v1"

// earlyStops stops the runs of a scenario's strategies as written once
// they certainly cannot meet the rule.
type earlyStops struct {
	// more is the most turns that can still end answered after a time.
	more   func(now, end time.Duration) int64
	window time.Duration // each run's duration
}

// newEarlyStops returns the early stopping of sc's runs as written under
// rule r, each simulating each (nil when a stop cannot be certain for sc:
// another objective than the p95 time to answer, an open workload, model
// calls, subagents, session classes, several processes, timed events, or a
// service without a request limit, with API keys or deduplicated writes,
// or a turn that may have no call).
func newEarlyStops(sc *scenarios.Scenario, r Rule, each time.Duration) *earlyStops {
	more, ok := moreAnswered(sc)
	if !ok || (r.Objective != "" && r.Objective != scenarios.ObjectiveP95) {
		return nil
	}
	return &earlyStops{more: more, window: each}
}

// moreAnswered returns, for sc, the most turns that can end answered
// after a time (in its whole duration); ok is false when no bound holds.
func moreAnswered(sc *scenarios.Scenario) (more func(now, end time.Duration) int64, ok bool) {
	w := &sc.Workload
	if w.Sessions <= 0 || w.ArrivalRate > 0 || w.LLM != nil || w.Subagents != nil || len(w.Classes) > 0 || w.Processes > 1 || len(sc.Events) > 0 || len(w.Calls) == 0 {
		return nil, false
	}
	minCalls := 0 // calls every turn makes, at least
	services := map[string]bool{}
	for _, g := range w.Calls {
		if g.Probability >= 1 && g.Count.Kind == spec.DistConstant {
			minCalls += max(0, int(math.Round(g.Count.Value)))
		}
		tools := []string{g.Tool}
		if g.Tool == "" {
			tools = nil
			for _, m := range g.Mix {
				tools = append(tools, m.Tool)
			}
		}
		for _, name := range tools {
			t := sc.Tool(name)
			if t == nil {
				return nil, false
			}
			services[t.Service] = true
		}
	}
	if minCalls < 1 {
		return nil, false
	}
	var limits []spec.Config
	for name := range services {
		svc := sc.Service(name)
		if svc == nil {
			return nil, false
		}
		c := svc.Model()
		if c.RPS <= 0 && c.RPM <= 0 || len(c.Keys) > 0 || c.DedupeWrites {
			return nil, false
		}
		limits = append(limits, c)
	}
	sessions := int64(w.Sessions)
	return func(now, end time.Duration) int64 {
		left := max(end-now, 0)
		var admitted float64
		for i := range limits {
			admitted += admits(&limits[i], left)
		}
		return sessions + int64(math.Ceil(admitted/float64(minCalls)))
	}, true
}

// admits is the most requests service c's request limits admit over a
// stretch of time left (both ends included), whatever came before: the
// tightest of its per-second and per-minute limits. A token bucket holds
// at most its capacity and refills at its limit per window; a fixed or
// sliding window admits at most its limit in each window the stretch
// touches, ⌊left ÷ window⌋ + 2 at most.
func admits(c *spec.Config, left time.Duration) float64 {
	best := math.Inf(1)
	for _, l := range []struct {
		limit, burst int64
		window       time.Duration
	}{{c.RPS, c.Burst, time.Second}, {c.RPM, c.Burst, time.Minute}} {
		if l.limit <= 0 {
			continue
		}
		if l.window == time.Minute && c.RPS > 0 {
			l.burst = 0 // Burst sizes the per-second bucket when there is one
		}
		x := float64(left) / float64(l.window)
		n := float64(l.limit) * (math.Floor(x) + 2)
		if c.Algorithm == spec.TokenBucket || c.Algorithm == "" {
			capacity := l.limit
			if l.burst > 0 {
				capacity = l.burst
			}
			n = float64(capacity) + float64(l.limit)*x
		}
		best = min(best, n)
	}
	return best
}

// fails reports whether a run that by now counted turns ended, failed of
// them, certainly ends with an answered share below MinAnsweredShare, and
// how many more turns could at most be answered: with A answered and M
// that most, when (A + M) ÷ (A + failed + M) < 0.95, in whole numbers
// 20·(A + M) < 19·(A + failed + M).
func (s *earlyStops) fails(now time.Duration, turns, failed int64) (bool, int64) {
	m := s.more(now, s.window)
	a := turns - failed
	return 20*(a+m) < 19*(a+failed+m), m
}

// options returns opts stopping its runs early where they certainly fail
// (opts itself when s is nil).
func (s *earlyStops) options(opts sim.Options) sim.Options {
	if s == nil {
		return opts
	}
	opts.StopKey = earlyStopKey
	opts.StopWhen = func(_ string, w sim.Watch) bool {
		ok, _ := s.fails(w.Now, w.Turns, w.FailedTurns)
		return ok
	}
	return opts
}

// stopped returns the stop of r, a run of a strategy as written (nil: it
// ran to its end), from its figures: the counts are those at the stop.
func (s *earlyStops) stopped(r results.StrategyResult) *results.EarlyStop {
	if s == nil || r.StoppedAtS <= 0 {
		return nil
	}
	// StoppedAtS is rounded to the microsecond: a microsecond earlier
	// leaves no less time, so M stays a bound.
	at := time.Duration(math.Round(r.StoppedAtS*1e9)) - time.Microsecond
	_, m := s.fails(at, r.Turns, r.FailedTurns)
	return &results.EarlyStop{AtS: r.StoppedAtS, DurationS: s.window.Seconds(), Turns: r.Turns, FailedTurns: r.FailedTurns, MaxMoreAnswered: m, MinAnsweredShare: MinAnsweredShare}
}

// stopText says what strategy answered before it was stopped, when and
// why: "unbounded answers 19% in the 20.0 s it ran of 600 s, stopped once
// 95% answered was out of reach: 655 of 813 turns failed, at most 12,185
// more could answer". share is its answered share at the stop.
func stopText(strategy string, share float64, e *results.EarlyStop) string {
	return fmt.Sprintf("%s answers %s in the %s it ran of %s s, stopped once %s%% answered was out of reach: %s of %s turns failed, at most %s more could answer",
		strategy, percent(share), secondsText(1000*e.AtS), numfmt.Num(e.DurationS), numfmt.Num(100*e.MinAnsweredShare),
		numfmt.Num(float64(e.FailedTurns)), numfmt.Num(float64(e.Turns)), numfmt.Num(float64(e.MaxMoreAnswered)))
}
