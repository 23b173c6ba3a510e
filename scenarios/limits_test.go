package scenarios_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sim"
)

// TestBoundsFitTheEngine loads a scenario at every upper bound the loader
// allows and checks that the fake service models and the scheduler accept
// what it describes: the bounds are derived from them, and must stay in
// step if they change.
func TestBoundsFitTheEngine(t *testing.T) {
	src := fmt.Sprintf(`duration = "8760h"
[workload]
sessions = 1
think = { dist = "lognormal", p50 = "1h", p95 = "2h", max = "8760h" }
calls = [ { tool = "t", count = %d } ]
[services.whole]
rps = %d
rpm = %d
tpm = %d
burst = %d
latency = "8760h"
faults = { overload = { every = "1ms", length = "8760h" } }
[services.fraction]
rps = %d.5
[services.slow]
rps = "1/h"
rpm = "1/h"
tpm = "1/h"
[tools.t]
service = "whole"
tokens = %d
[[strategy]]
name = "edges"
token_bucket = true
headroom = %v
max_in_flight = %d
token_budget = %d
retry = { backoff = "exponential", base = "1ms", cap = "8760h", attempts = %d, max_retry_after = "8760h" }
`, scenarios.MaxCallsPerTurn, scenarios.MaxRequestsPerSecond, scenarios.MaxRequestsPerMinute, scenarios.MaxTokensPerMinute,
		scenarios.MaxRequestsPerMinute, scenarios.MaxRequestsPerSecond-1, scenarios.MaxTokensPerCall, scenarios.MinHeadroom,
		scenarios.MaxCap, scenarios.MaxTokenBudget, scenarios.MaxAttempts)
	sc, err := scenarios.Parse("bounds.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for i := range sc.Services {
		cfg := sim.ModelConfig(&sc.Services[i])
		if _, err := fakeapi.NewModel(cfg, rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Errorf("service %s: %v", sc.Services[i].Name, err)
		}
	}
	cfg, err := sim.SchedConfig(sc, &sc.Strategies[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sched.New(cfg); err != nil {
		t.Errorf("sched.New: %v", err)
	}
}
