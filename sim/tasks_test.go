package sim

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

func runTasks(t *testing.T, sc *scenarios.Scenario) *results.Tasks {
	t.Helper()
	res, err := Run(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tk := res.Strategies[0].Tasks
	if tk == nil {
		t.Fatal("no tasks in the results")
	}
	return tk
}

// The article's figure, end to end: a model right 85% of the time at each
// of 10 steps answers 0.85^10 = 19.7% of its tasks. Over 5 seeds of 2,000
// sessions the share completed is within 1% of it (0.1976).
func TestModelSuccessCompletesTheProduct(t *testing.T) {
	var begun, completed int64
	for seed := range uint64(5) {
		tk := runTasks(t, simtest.TasksScenario(t, 100+seed, 2000, 10, ", success = 0.85", ""))
		if tk.Begun != 2000 || tk.Completed+tk.FailedTasks != tk.Begun {
			t.Fatalf("seed %d: %d tasks begun, %d completed, %d failed; want 2000 begun, all ended", seed, tk.Begun, tk.Completed, tk.FailedTasks)
		}
		if tk.ModelFailures != tk.FailedTasks || tk.ModelRetries != 0 {
			t.Errorf("seed %d: %d model failures, %d retries for %d failed tasks; want one failure per failed task, no retry", seed, tk.ModelFailures, tk.ModelRetries, tk.FailedTasks)
		}
		begun += tk.Begun
		completed += tk.Completed
	}
	got, want := float64(completed)/float64(begun), math.Pow(0.85, 10)
	t.Logf("completion %.4f over %d tasks; 0.85^10 = %.4f", got, begun, want)
	if math.Abs(got-want) > 0.01*want {
		t.Errorf("completion %.4f over %d tasks; want %.4f ± 1%%", got, begun, want)
	}
}

// Retries cure model failures: with 2 retries a step fails only when three
// draws fail (0.15^3), so 10 steps complete 1 − 10 × 0.0034 ≈ 96.7% of the
// tasks; every retry is a model failure that did not abandon its task.
func TestModelRetriesLiftCompletion(t *testing.T) {
	tk := runTasks(t, simtest.TasksScenario(t, 7, 2000, 10, ", success = 0.85, retries = 2", ""))
	want := math.Pow(1-math.Pow(0.15, 3), 10)
	if got := tk.Completion; math.Abs(got-want) > 0.01 {
		t.Errorf("completion %.4f; want %.4f ± 0.01", got, want)
	}
	if tk.ModelFailures != tk.ModelRetries+tk.FailedTasks {
		t.Errorf("%d model failures; want the %d retries plus the %d abandoned tasks", tk.ModelFailures, tk.ModelRetries, tk.FailedTasks)
	}
}

// The model's draws come from a stream of their own: setting success moves
// no other draw, so while no model turn fails every figure but the tasks'
// is that of the run without it.
func TestModelSuccessMovesNoOtherDraw(t *testing.T) {
	plain, err := Run(context.Background(), simtest.TasksScenario(t, 3, 20, 5, "", `price_per_1k_input = 0.001`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sure, err := Run(context.Background(), simtest.TasksScenario(t, 3, 20, 5, ", success = 0.9999999999", `price_per_1k_input = 0.001`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := plain.Strategies[0], sure.Strategies[0]
	if b.Tasks.ModelFailures != 0 {
		t.Fatalf("%d model failures at success 0.9999999999", b.Tasks.ModelFailures)
	}
	a.Tasks, b.Tasks = nil, nil
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("figures moved when success was set:\n%v\n%v", a, b)
	}
}

// The cost is the billed tokens times the prices: 3 sessions of 4 turns,
// every call answered, bill 12 model calls of 800 input and 200 output
// tokens and 12 tool calls of 50 input tokens, at each service's prices.
func TestCostIsTokensTimesPrices(t *testing.T) {
	sc := simtest.TasksScenario(t, 5, 3, 4, "", "price_per_1k_input = 0.003\nprice_per_1k_output = 0.015")
	sc.Services[1].PricePer1kInput = 0.0005
	tk := runTasks(t, sc)
	if tk.Completed != 3 || tk.Completion != 1 {
		t.Fatalf("%d tasks completed (completion %v); want all 3", tk.Completed, tk.Completion)
	}
	want := []results.ServiceCost{
		{Service: "model", InputTokens: 12 * 800, OutputTokens: 12 * 200, PricePer1kInput: 0.003, PricePer1kOutput: 0.015,
			CostUSD: setup.Round6(12*800*0.003/1000 + 12*200*0.015/1000)},
		{Service: "api", InputTokens: 12 * 50, PricePer1kInput: 0.0005, CostUSD: setup.Round6(12 * 50 * 0.0005 / 1000)},
	}
	if fmt.Sprint(tk.Services) != fmt.Sprint(want) {
		t.Errorf("billed %+v; want %+v", tk.Services, want)
	}
	var cost float64
	for _, s := range want {
		cost += float64(s.InputTokens)*s.PricePer1kInput/1000 + float64(s.OutputTokens)*s.PricePer1kOutput/1000
	}
	if tk.CostUSD != setup.Round6(cost) || tk.CostPerAnsweredTaskUSD != setup.Round6(cost/3) {
		t.Errorf("cost $%v, $%v a task; want $%v, $%v", tk.CostUSD, tk.CostPerAnsweredTaskUSD, setup.Round6(cost), setup.Round6(cost/3))
	}
	if tk.InputTokens != 12*850 || tk.OutputTokens != 12*200 {
		t.Errorf("%d input, %d output tokens; want %d, %d", tk.InputTokens, tk.OutputTokens, 12*850, 12*200)
	}
}
