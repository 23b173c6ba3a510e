package sim

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// A closed workload's demand is its sessions over the time one turn and one
// think take: with constant 1 s calls and 4 s thinks, 10 sessions offer
// 10 ÷ 5 s = 2 turns/s, however tight the service's limits are.
func TestDemandOfClosedWorkload(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "demand"
duration = "10m"
[workload]
sessions = 10
think = { dist = "constant", value = "4s" }
calls = [ { tool = "t", count = 8 } ]
[services.s]
rpm = 60
max_concurrent = 1
latency = { dist = "constant", value = "1s" }
faults = { error_rate = 0.5 }
[tools.t]
service = "s"
[[strategy]]
name = "sequential"
max_in_flight = 1
`)
	// The caller's progress callback knows only the scenario's strategies;
	// the demand run must not report to it.
	progress := func(strategy string, _, _ time.Duration) { t.Errorf("progress reported for %q", strategy) }
	got, err := Demand(context.Background(), sc, Options{Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-2) > 0.01 {
		t.Errorf("demand = %v turns/s, want 2", got)
	}
	if sc.Services[0].RequestsPerMinute != 60 || sc.Services[0].Faults.ErrorRate != 0.5 {
		t.Errorf("Demand changed the scenario: %+v", sc.Services[0])
	}
}

// A run too long to simulate whole is estimated from a window: 200
// sessions of 1 s calls and 1 s thinks begin about 100 turns a second
// from the start (a turn takes a little over its call, so a little fewer),
// and the one-minute window's figure stays within 0.5% of the whole run's.
// With 20 turns a session the workload ends after 4,000 turns, which the
// estimate from its five-minute window caps at: exactly the whole run's.
func TestDemandFromAWindow(t *testing.T) {
	for _, tc := range []struct {
		turns  string
		window time.Duration
		tol    float64
	}{{"", time.Minute, 0.005}, {"turns = 20", 5 * time.Minute, 0}} {
		sc := simtest.MustParse(t, `
name = "window"
duration = "10m"
[workload]
sessions = 200
`+tc.turns+`
think = { dist = "constant", value = "1s" }
calls = [ { tool = "t", count = 1 } ]
[services.s]
rpm = 60
latency = { dist = "constant", value = "1s" }
[tools.t]
service = "s"
[[strategy]]
name = "sequential"
max_in_flight = 1
`)
		if w := demandWindow(unlimited(sc)); w != tc.window {
			t.Fatalf("%q: window %v, want %v", tc.turns, w, tc.window)
		}
		got, err := Demand(context.Background(), sc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		whole, err := demand(context.Background(), unlimited(sc), Options{}, sc.Duration)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got/whole-1) > tc.tol {
			t.Errorf("%q: demand %v turns/s, the whole run %v: more than %v apart", tc.turns, got, whole, tc.tol)
		}
	}
}

// Timed events change a turn's time over the run: a window cannot stand
// for the rest, so the whole run is simulated.
func TestDemandWindowIsTheWholeRunWithEvents(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	c := unlimited(sc)
	if w := demandWindow(c); w >= c.Duration {
		t.Fatalf("tier3 window %v, want less than its %v", w, c.Duration)
	}
	c.Events = []scenarios.Event{{Service: c.Services[0].Name, At: time.Minute, For: time.Minute, LatencyFactor: 2}}
	if w := demandWindow(c); w != c.Duration {
		t.Errorf("window with an event %v, want the whole %v", w, c.Duration)
	}
}

func TestDemandOfOpenWorkloadIsItsRate(t *testing.T) {
	sc := &scenarios.Scenario{Duration: time.Minute, Workload: scenarios.Workload{ArrivalRate: 3.5}}
	if got, err := Demand(context.Background(), sc, Options{}); err != nil || got != 3.5 {
		t.Errorf("Demand = %v, %v; want 3.5", got, err)
	}
}

// runOnly runs a scenario in virtual time, failing the test on an error.
func runOnly(t *testing.T, sc *scenarios.Scenario) *results.Results {
	t.Helper()
	res, err := Run(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
