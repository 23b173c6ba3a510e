package scenarios_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/setup"
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
		cfg := setup.ModelConfig(&sc.Services[i])
		if _, err := fakeapi.NewModel(cfg, rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Errorf("service %s: %v", sc.Services[i].Name, err)
		}
	}
	cfg, err := setup.SchedConfig(sc, &sc.Strategies[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sched.New(cfg); err != nil {
		t.Errorf("sched.New: %v", err)
	}
}

// TestSplitRatesStayAboveTheSchedulersFloor: "split" divides a service's
// rate among the processes; the slowest rate a file may give, one an hour
// (1/60 a minute), divided among 24 processes is the scheduler's floor,
// one a day (1/1440 a minute), which every process's scheduler takes;
// among 25 it is below, and the file is refused at the quota's mode.
func TestSplitRatesStayAboveTheSchedulersFloor(t *testing.T) {
	src := func(n int) string {
		return fmt.Sprintf(`name = "a"
duration = "1m"
[services.s]
rpm = "1/h"
tpm = 1000
[tools.t]
service = "s"
[workload]
sessions = %d
processes = %d
calls = [ { tool = "t", count = 1 } ]
[[strategy]]
name = "x"
token_bucket = true
quota = { mode = "split" }
`, n, n)
	}
	sc, err := scenarios.Parse("a.toml", []byte(src(24)))
	if err != nil {
		t.Fatalf("24 processes: %v", err)
	}
	cfg, err := sim.ProcessSchedConfig(sc, &sc.Strategies[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Services["s"].RequestsPerMinute; got != sched.MinRatePerMinute {
		t.Errorf("24 processes: %g requests a minute each, want the floor %g", got, sched.MinRatePerMinute)
	}
	if _, err := sched.New(cfg); err != nil {
		t.Errorf("24 processes: the scheduler refuses its part: %v", err)
	}
	_, err = scenarios.Parse("a.toml", []byte(src(25)))
	const want = `a.toml:15:11: strategy[0].quota.mode: "split" gives each of the 25 processes 0.000667 requests a minute of service "s"`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "below the scheduler's floor of one a day") {
		t.Errorf("25 processes: %v, want it to say %q and name the floor", err, want)
	}
}

// TestServicesBounded: a scenario may have MaxServices services, not one
// more; the problem names the file and line of the services.
func TestServicesBounded(t *testing.T) {
	src := func(n int) []byte {
		var b strings.Builder
		b.WriteString("name = \"a\"\nduration = \"10s\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\", count = 1 } ]\n[tools.t]\nservice = \"s0\"\n[[strategy]]\nname = \"x\"\n")
		for i := range n {
			fmt.Fprintf(&b, "[services.s%d]\nrps = 5\n", i)
		}
		return []byte(b.String())
	}
	if _, err := scenarios.Parse("a.toml", src(scenarios.MaxServices)); err != nil {
		t.Errorf("%d services: %v", scenarios.MaxServices, err)
	}
	_, err := scenarios.Parse("a.toml", src(scenarios.MaxServices+1))
	want := fmt.Sprintf("a.toml:10:2: services: %d services; a scenario may have at most %d", scenarios.MaxServices+1, scenarios.MaxServices)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%d services: %v, want it to say %q", scenarios.MaxServices+1, err, want)
	}
}
