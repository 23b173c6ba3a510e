package sim

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// A closed workload's demand is its sessions over the time one turn and one
// think take: with constant 1 s calls and 4 s thinks, 10 sessions offer
// 10 ÷ 5 s = 2 turns/s, however tight the service's limits are.
func TestDemandOfClosedWorkload(t *testing.T) {
	sc := mustParse(t, `
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

func TestDemandOfOpenWorkloadIsItsRate(t *testing.T) {
	sc := &scenarios.Scenario{Duration: time.Minute, Workload: scenarios.Workload{ArrivalRate: 3.5}}
	if got, err := Demand(context.Background(), sc, Options{}); err != nil || got != 3.5 {
		t.Errorf("Demand = %v, %v; want 3.5", got, err)
	}
}

func mustParse(t *testing.T, toml string) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Parse("test.toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	return sc
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
