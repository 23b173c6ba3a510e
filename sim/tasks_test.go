package sim

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
)

// tasksScenario is sessions sessions of turns turns each, a model call of
// 1000 tokens (200 output) then one 50-token tool call a turn, on one
// service; extra is appended to the workload's llm table.
func tasksScenario(t *testing.T, seed uint64, sessions, turns int, llm, extra string) *scenarios.Scenario {
	t.Helper()
	src := fmt.Sprintf(`
name = "tasks"
seed = %d
duration = "2h"
[workload]
sessions = %d
turns = %d
llm = { service = "model", tokens = 1000, output_tokens = 200%s }
calls = [ { tool = "fetch", count = 1 } ]
[services.model]
latency = "100ms"
network_delay = "0s"
%s
[services.api]
latency = "50ms"
network_delay = "0s"
[tools.fetch]
service = "api"
tokens = 50
[[strategy]]
name = "bounded-4"
max_in_flight = 4
`, seed, sessions, turns, llm, extra)
	sc, err := scenarios.Parse("tasks.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

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
		tk := runTasks(t, tasksScenario(t, 100+seed, 2000, 10, ", success = 0.85", ""))
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
	tk := runTasks(t, tasksScenario(t, 7, 2000, 10, ", success = 0.85, retries = 2", ""))
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
	plain, err := Run(context.Background(), tasksScenario(t, 3, 20, 5, "", `price_per_1k_input = 0.001`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sure, err := Run(context.Background(), tasksScenario(t, 3, 20, 5, ", success = 0.9999999999", `price_per_1k_input = 0.001`), Options{})
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

// Context growth resends a growing prompt: turn i's model call carries
// 1000 + (i−1) × 300 tokens, the growth all input. The agent loop hands
// out exactly those, turn by turn.
func TestContextGrowthTokensPerIteration(t *testing.T) {
	sc := tasksScenario(t, 1, 1, 4, ", context_growth = 300", "")
	d := &loopDriver{t: t, a: agent.NewAgentLoop(sc, &sc.Strategies[0], []float64{1}, 100)}
	d.a.Begin()
	d.take()
	d.a.Wake(0, 0)
	d.take()
	var got []int64
	for i := range 4 {
		now := time.Duration(i+1) * time.Second
		llm := d.pending[0]
		got = append(got, llm.Calls[0].Tokens)
		if m := llm.Calls[0].Payload.(*agent.CallMeta); m.Output != 200 {
			t.Errorf("turn %d: %d output tokens; want 200 (growth is input)", i+1, m.Output)
		}
		d.answer(now, false) // the model call
		d.answer(now, false) // the tool call
		for _, op := range slices.Clone(d.ops) {
			if op.Kind == agent.OpWake {
				d.a.Wake(op.At, op.Session)
				d.take()
			}
		}
	}
	want := []int64{1000, 1300, 1600, 1900}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("model call tokens by turn %v; want %v", got, want)
	}
}

// The cost is the billed tokens times the prices: 3 sessions of 4 turns,
// every call answered, bill 12 model calls of 800 input and 200 output
// tokens and 12 tool calls of 50 input tokens, at each service's prices.
func TestCostIsTokensTimesPrices(t *testing.T) {
	sc := tasksScenario(t, 5, 3, 4, "", "price_per_1k_input = 0.003\nprice_per_1k_output = 0.015")
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

// An orchestrator budget is checked before each spawn: a turn that spent
// 800 tokens (a 500-token model call, three 100-token tool calls) under a
// budget of 3500 spawns two of its five subagents of 1000 tokens each
// (800 + 2 × 1000 reserved leaves 700, too little for a third) and skips
// three.
func TestOrchestratorBudgetBeforeSpawning(t *testing.T) {
	sc := agentScenario()
	sc.Workload.Turns = 1
	sc.Workload.Subagents.Count = spec.Constant(5.0)
	sc.Workload.Subagents.TokenBudget = 1000
	sc.Workload.Subagents.OrchestratorBudget = 3500
	d := &loopDriver{t: t, a: agent.NewAgentLoop(sc, &scenarios.Strategy{}, []float64{1}, 100)}
	d.a.Begin()
	d.take()
	d.a.Wake(0, 0)
	d.take()
	d.answer(time.Second, false) // the model call
	d.answer(time.Second, false) // the tool calls
	subs := 0
	for _, p := range d.pending {
		if p.Kind == agent.PartSubTools {
			subs++
		}
	}
	if subs != 2 || d.a.Book.Skipped != 3 {
		t.Errorf("%d subagents spawned, %d skipped; want 2 and 3", subs, d.a.Book.Skipped)
	}
}

// A wide turn asks for batch_turns turns' calls at once: a session of 10
// turns batched by 5 runs 2 turns of 5 tool calls each, and the second
// model call's context has grown by the 5 turns' results (1000 + 5 × 300
// tokens); then the session is done.
func TestBatchTurnsMakeWideTurns(t *testing.T) {
	sc := tasksScenario(t, 1, 1, 10, ", context_growth = 300", "")
	st := sc.Strategies[0]
	st.BatchTurns = 5
	d := &loopDriver{t: t, a: agent.NewAgentLoop(sc, &st, []float64{1}, 100)}
	d.a.Begin()
	d.take()
	d.a.Wake(0, 0)
	d.take()
	var tokens []int64
	var calls []int
	for i := 0; len(d.pending) > 0; i++ {
		now := time.Duration(i+1) * time.Second
		tokens = append(tokens, d.pending[0].Calls[0].Tokens)
		d.answer(now, false) // the model call
		calls = append(calls, len(d.pending[0].Calls))
		d.answer(now, false) // the wide turn's tool calls
		for _, op := range slices.Clone(d.ops) {
			if op.Kind == agent.OpWake {
				d.a.Wake(op.At, op.Session)
				d.take()
			}
		}
	}
	done := slices.Contains(d.log, "session 0 done")
	if fmt.Sprint(tokens) != "[1000 2500]" || fmt.Sprint(calls) != "[5 5]" || !done {
		t.Errorf("model call tokens %v, tool calls %v by turn, session done %v; want [1000 2500], [5 5], true", tokens, calls, done)
	}
	if tk := d.a.Tasks(); tk.Begun != 1 || tk.Completed != 1 {
		t.Errorf("tasks %+v; want 1 begun and completed", tk)
	}
}
