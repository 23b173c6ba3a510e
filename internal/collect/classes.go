package collect

import (
	"time"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
)

// ClassStats gathers the figures of each session class of a closed-model
// workload (scenarios.Workload.Classes), for results.ClassResult.
type ClassStats struct {
	w       *scenarios.Workload
	window  time.Duration
	classes []classAcc
}

type classAcc struct {
	turns, failed, calls, good int64
	turnLat, okTurnLat         *Histogram
}

// NewClassStats returns the class figures of sc's run, or nil when its
// workload has no classes.
func NewClassStats(sc *scenarios.Scenario) *ClassStats {
	w := &sc.Workload
	if len(w.Classes) == 0 {
		return nil
	}
	c := &ClassStats{w: w, window: sc.Duration, classes: make([]classAcc, len(w.Classes))}
	for i := range c.classes {
		c.classes[i] = classAcc{turnLat: NewHistogram(), okTurnLat: NewHistogram()}
	}
	return c
}

// Turn records a turn of session that finished at now.
func (c *ClassStats) Turn(session int, now, latency time.Duration, failed bool) {
	if session < 0 || now > c.window {
		return
	}
	a := &c.classes[c.w.ClassOf(session)]
	a.turns++
	if failed {
		a.failed++
	} else {
		a.okTurnLat.Add(latency)
	}
	a.turnLat.Add(latency)
}

// Result records a tool call's result of session.
func (c *ClassStats) Result(session int, r *sched.Result) {
	if session < 0 || r.Finished > c.window {
		return
	}
	a := &c.classes[c.w.ClassOf(session)]
	a.calls++
	if r.Err == nil {
		a.good++
	}
}

// Results returns the classes' figures in the order of the workload's.
func (c *ClassStats) Results() []results.ClassResult {
	var good int64
	for i := range c.classes {
		good += c.classes[i].good
	}
	out := make([]results.ClassResult, len(c.classes))
	for i := range c.classes {
		a := &c.classes[i]
		out[i] = results.ClassResult{
			Name: c.w.Classes[i].Name, Sessions: c.w.Classes[i].Sessions,
			Turns: a.turns, FailedTurns: a.failed, Calls: a.calls, GoodCalls: a.good,
			TurnLatencyMs: a.turnLat.Summary(), AnswerLatencyMs: a.okTurnLat.AnswerSummary(uint64(a.turns)),
		}
		if good > 0 {
			out[i].CallShare = setup.Round6(float64(a.good) / float64(good))
		}
	}
	return out
}

// ClassRanks maps each session class of the workload to its priority
// (sched.Call.Priority) under the strategy's priority table, or nil
// without one.
func ClassRanks(sc *scenarios.Scenario, st *scenarios.Strategy) []int {
	if len(st.Priority) == 0 {
		return nil
	}
	ranks := make([]int, len(sc.Workload.Classes))
	for i, c := range sc.Workload.Classes {
		for p, e := range st.Priority {
			if e.Class == c.Name {
				ranks[i] = p
			}
		}
	}
	return ranks
}
