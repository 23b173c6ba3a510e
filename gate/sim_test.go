package gate_test

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/simbench/simbench/gate"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// benchOutput runs one strategy of a scenario for two virtual minutes (a
// fifth of tier3, to keep the race-detector run short) and formats its
// figures as one benchmark result, with the units bench_test.go's
// reportFigures reports, as go test on 2 cores would print them.
func benchOutput(t *testing.T, sc *scenarios.Scenario, strategy string) string {
	t.Helper()
	res, err := sim.Run(context.Background(), sc, sim.Options{Strategies: []string{strategy}, Parallel: 1, Duration: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Strategies[0]
	apc := 0.0
	if s.Calls > 0 {
		apc = float64(s.Attempts) / float64(s.Calls)
	}
	var buf bytes.Buffer
	w := benchfmt.NewWriter(&buf)
	err = w.Write(&benchfmt.Result{
		Config: []benchfmt.Config{{Key: "pkg", Value: []byte("github.com/simbench/simbench"), File: true}},
		Name:   benchfmt.Name("Scenario/" + sc.Name + "/" + strategy + "-2"),
		Iters:  1,
		Values: []benchfmt.Value{
			{Value: s.TurnLatencyMs.P50, Unit: "p50-turn-ms"},
			{Value: s.TurnLatencyMs.P95, Unit: "p95-turn-ms"},
			{Value: s.TurnLatencyMs.P99, Unit: "p99-turn-ms"},
			{Value: float64(s.RateLimited), Unit: "429s/op"},
			{Value: s.GoodputPerS, Unit: "goodput/s"},
			{Value: s.WastedWorkS, Unit: "wasted-s"},
			{Value: float64(s.EarlyRetries), Unit: "early-retries"},
			{Value: float64(s.WriteRaces), Unit: "write-races"},
			{Value: float64(s.Failed), Unit: "failed-calls"},
			{Value: apc, Unit: "attempts/call"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// worse returns a copy of sc whose named strategy is changed by edit.
func worse(sc *scenarios.Scenario, strategy string, edit func(*scenarios.Strategy)) *scenarios.Scenario {
	c := *sc
	c.Strategies = append([]scenarios.Strategy(nil), sc.Strategies...)
	for i := range c.Strategies {
		if c.Strategies[i].Name == strategy {
			edit(&c.Strategies[i])
		}
	}
	return &c
}

// End to end: the tier3 scenario through the simulator, once as shipped and
// once per deliberately worse setting of its bounded strategy. The gate
// passes the unchanged rerun and flags each worse one, naming the rows that
// got worse first.
func TestGateCatchesWorseSchedulerSetting(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates tier3 four times")
	}
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	const strategy = "bounded-64"
	base := parse(t, benchOutput(t, sc, strategy), "baseline.txt")

	same := gate.Compare(base, parse(t, benchOutput(t, sc, strategy), "new.txt"), gate.Options{})
	if err := same.Err(); err != nil {
		t.Errorf("rerun of the same scenario: %v\n%s", err, tableOf(t, same))
	}
	if s := same.Summary(); s.Unchanged != 10 || s.Regressions+s.Improvements+s.Undecided+s.Missing+s.New != 0 {
		t.Errorf("rerun: %s, want all 10 units unchanged (the simulation is deterministic)", s)
	}

	tests := []struct {
		name string
		edit func(*scenarios.Strategy)
		want []string // regular expressions, each matching a table line
	}{
		{
			// Fires at the limit unpaced: 429s and failed calls appear.
			name: "token bucket off, cap doubled",
			edit: func(s *scenarios.Strategy) { s.TokenBucket = false; s.MaxInFlight *= 2 },
			want: []string{
				`^simbench\.BenchmarkScenario/tier3/bounded-64 +429s/op +0 +[1-9][0-9]* +\+∞ +REGRESSION: beyond limit: may not rise$`,
				`^simbench\.BenchmarkScenario/tier3/bounded-64 +failed-calls +0 +[1-9][0-9]* +\+∞ +REGRESSION: beyond limit: may not rise$`,
			},
		},
		{
			// A quarter of the cap: turns queue, latency rises, goodput falls.
			name: "cap quartered",
			edit: func(s *scenarios.Strategy) { s.MaxInFlight /= 4 },
			want: []string{
				`^simbench\.BenchmarkScenario/tier3/bounded-64 +p95-turn-ms +[0-9]+ +[0-9]+ +\+[0-9.]+% +REGRESSION: beyond limit \+2%$`,
				`^simbench\.BenchmarkScenario/tier3/bounded-64 +goodput/s +[0-9.]+ +[0-9.]+ +-[0-9.]+% +REGRESSION: beyond limit -1%$`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := gate.Compare(base, parse(t, benchOutput(t, worse(sc, strategy, tt.edit), strategy), "new.txt"), gate.Options{})
			out := tableOf(t, bad)
			if err := bad.Err(); !errors.Is(err, gate.ErrRegression) {
				t.Fatalf("Err() = %v, want ErrRegression\n%s", err, out)
			}
			for _, want := range tt.want {
				if !regexp.MustCompile("(?m)" + want).MatchString(out) {
					t.Errorf("no line matches %s:\n%s", want, out)
				}
			}
			if first := strings.SplitN(out, "\n", 3)[1]; !strings.Contains(first, "REGRESSION") {
				t.Errorf("the first row is not a regression:\n%s", out)
			}
			t.Logf("\n%s", out)
		})
	}
}

func parse(t *testing.T, text, file string) *gate.Set {
	t.Helper()
	s, err := gate.Parse(strings.NewReader(text), file)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func tableOf(t *testing.T, r *gate.Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
