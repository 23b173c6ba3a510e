package reports

import (
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
)

// The tasks table shows each strategy's completion, time to answer a
// task, model failures and cost, the best of each column marked; results
// without tasks get no table.
func TestTaskTable(t *testing.T) {
	r := &results.Results{Scenario: "t", Strategies: []results.StrategyResult{
		{Name: "narrow", PeakInFlight: map[string]int{}, Tasks: &results.Tasks{Begun: 100, Completed: 20, Completion: 0.2,
			ModelFailures: 80, TimeToAnswerMs: results.Summary{P50: 20000, P95: 30000}, CostUSD: 12.5, CostPerAnsweredTaskUSD: 0.625}},
		{Name: "wide", PeakInFlight: map[string]int{}, Tasks: &results.Tasks{Begun: 100, Completed: 72, Completion: 0.72,
			ModelFailures: 28, TimeToAnswerMs: results.Summary{P50: 5000, P95: 9000}, CostUSD: 4.25, CostPerAnsweredTaskUSD: 0.059028}},
	}}
	var b strings.Builder
	if err := WriteTable(&b, r, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  strategy  completion %  task p50  task p95  model fails  cost $  $/answer",
		"  narrow            20.0    20,000    30,000           80   12.50    0.6250",
		"  wide             72.0*    5,000*    9,000*          28*   4.25*   0.0590*",
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("no line %q in:\n%s", want, b.String())
		}
	}
	r.Strategies[0].Tasks, r.Strategies[1].Tasks = nil, nil
	if rows := taskRows(r); rows != nil {
		t.Errorf("rows %v without tasks", rows)
	}
}
