package sim

import (
	"testing"
	"time"

	"github.com/simbench/simbench/internal/simtest"
)

// overloaded is an open workload at rate turns/s, one call each, against
// one server that answers a request in exactly 100 ms, one at a time (the
// strategy's cap of 1, no network delay): a capacity of 10 turns/s.
func overloaded(t *testing.T, rate, duration string) *engine {
	t.Helper()
	sc := simtest.MustParse(t, `
name = "overload"
duration = "`+duration+`"
[workload]
arrival_rate = "`+rate+`"
calls = [ { tool = "t", count = 1 } ]
[services.s]
rps = 1000
latency = { dist = "constant", value = "100ms" }
network_delay = "0s"
[tools.t]
service = "s"
[[strategy]]
name = "one-at-a-time"
max_in_flight = 1
`)
	return runOne(t, sc)
}

// An open workload at twice the server's capacity for ten minutes: the run
// ends at the duration, so the turns achieved never exceed what the server
// can serve, and the queue left is unfinished.
func TestOverloadAchievedWithinCapacity(t *testing.T) {
	e := overloaded(t, "20/s", "10m")
	r := e.result()
	const capacity = 10.0 // turns/s
	if r.AchievedTurnsPerS > 1.01*capacity || r.AchievedTurnsPerS < 0.99*capacity {
		t.Errorf("achieved %v turns/s at twice a capacity of %v/s; want it at the capacity", r.AchievedTurnsPerS, capacity)
	}
	if r.GoodputPerS > capacity || r.AnsweredGoodputPerS != r.GoodputPerS {
		t.Errorf("goodput %v, answered %v: want at most %v, equal (no call fails)", r.GoodputPerS, r.AnsweredGoodputPerS, capacity)
	}
	if r.UnfinishedTurns < 5000 {
		t.Errorf("%d unfinished turns; want the queue of about 6,000 left at the end", r.UnfinishedTurns)
	}
}

// At 1.2× the capacity for an hour the run ends at 3600 s: nothing runs
// after it, and the turns still queued are counted as unfinished, in no
// latency figure.
func TestOverloadEndsAtDuration(t *testing.T) {
	e := overloaded(t, "12/s", "1h")
	r := e.result()
	if e.now > time.Hour || !e.cutOff {
		t.Errorf("the run ended at %v (cut off %v); want it to end at 1h with work left", e.now, e.cutOff)
	}
	begun := e.Agents.TurnNo
	if r.UnfinishedTurns == 0 || uint64(r.Turns+r.UnfinishedTurns) != begun {
		t.Errorf("%d turns finished, %d unfinished, %d begun; want every turn begun counted once", r.Turns, r.UnfinishedTurns, begun)
	}
	// One at a time in exactly 100 ms: at most 36,000 turns in an hour.
	if r.Turns > 36_000 || r.AchievedTurnsPerS > 10 {
		t.Errorf("%d turns, achieved %v/s: more than the server can serve in an hour", r.Turns, r.AchievedTurnsPerS)
	}
	if n := r.TurnLatencyMs; float64(n.Max) > time.Hour.Seconds()*1000 {
		t.Errorf("slowest turn %v ms: longer than the run", n.Max)
	}
}
