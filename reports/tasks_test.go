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
	if rows := taskRows(r, taskMetrics()); rows != nil {
		t.Errorf("rows %v without tasks", rows)
	}
}

// The report's tasks table adds the scheduler's figures when a strategy
// has them (its model turns may fail); the terminal's stays as it is.
func TestTaskColumnsAddTheSchedulersFigures(t *testing.T) {
	sched := results.AnswerSummary{P95: results.Unanswered, AnsweredShare: 0.871}
	r := &results.Results{Strategies: []results.StrategyResult{
		{Name: "narrow", Tasks: &results.Tasks{Begun: 10, ModelFailedTurns: 74, SchedulerAnswerLatencyMs: &sched}},
		{Name: "plain"},
	}}
	ms := taskColumns(r, true)
	if len(ms) != len(taskMetrics())+3 || len(taskColumns(r, false)) != len(taskMetrics()) {
		t.Fatalf("report columns %d, terminal %d", len(ms), len(taskColumns(r, false)))
	}
	rows := taskRows(r, ms)
	if got := strings.Join(rows[0][len(rows[0])-3:], " "); got != "74 87.1 —" {
		t.Errorf("narrow's scheduler cells %q; want 74 87.1 —", got)
	}
	if got := strings.Join(rows[1][len(rows[1])-3:], " "); got != "– – –" {
		t.Errorf("plain's scheduler cells %q", got)
	}
	r.Strategies[0].Tasks.SchedulerAnswerLatencyMs = nil
	if len(taskColumns(r, true)) != len(taskMetrics()) {
		t.Error("scheduler columns without scheduler figures")
	}
}
