package sim

import (
	"context"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// TestHedgingScenario is the check on the built-in hedging
// scenario, on virtual time: each hedged strategy cuts the p99 time to
// answer by at least 30% against no-hedge at no more than 10% extra
// attempts, and the attempts its hedges cancelled cost the server no work
// after the cancel (wasted_work_s is 0; cancelled_work_s is the work up to
// the cancels). The figures of the scenario's seed are asserted exactly.
func TestHedgingScenario(t *testing.T) {
	by := map[string]results.StrategyResult{}
	for _, s := range runBuiltin(t, "hedging").Strategies {
		by[s.Name] = s
	}
	base := by["no-hedge"]
	if base.Hedges != 0 || base.HedgesWon != 0 || base.CancelledWorkS != 0 {
		t.Errorf("no-hedge: %d hedges, %d won, %v s cancelled work", base.Hedges, base.HedgesWon, base.CancelledWorkS)
	}
	type figures struct {
		calls, attempts, hedges, won int64
		p99, cancelledS, wastedS     float64
	}
	want := map[string]figures{
		"no-hedge":    {20288, 20312, 0, 0, 10007.609, 0, 0},
		"hedge-300ms": {25388, 25979, 579, 266, 518.259, 146.21009, 0},
		"hedge-p95":   {25312, 27075, 1755, 267, 476.578, 203.600828, 0},
	}
	for name, w := range want {
		s := by[name]
		got := figures{s.Calls, s.Attempts, s.Hedges, s.HedgesWon, float64(s.AnswerLatencyMs.P99), s.CancelledWorkS, s.WastedWorkS}
		if got != w {
			t.Errorf("%s: figures %+v, want %+v", name, got, w)
		}
		if name == "no-hedge" {
			continue
		}
		if s.AnswerLatencyMs.P99 > 0.7*base.AnswerLatencyMs.P99 {
			t.Errorf("%s: p99 time to answer %v ms, not 30%% below no-hedge's %v ms", name, s.AnswerLatencyMs.P99, base.AnswerLatencyMs.P99)
		}
		if float64(s.Hedges) > 0.1*float64(s.Calls) {
			t.Errorf("%s: %d hedges for %d calls, more than 10%% extra attempts", name, s.Hedges, s.Calls)
		}
		if s.WastedWorkS != 0 || s.CancelledWorkS <= 0 || s.HedgesWon == 0 {
			t.Errorf("%s: wasted %v s after cancels, %v s before them, %d hedges won", name, s.WastedWorkS, s.CancelledWorkS, s.HedgesWon)
		}
	}
}

// runBuiltin runs the built-in scenario name as written, on virtual time.
func runBuiltin(t *testing.T, name string) *results.Results {
	t.Helper()
	sc, err := scenarios.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
