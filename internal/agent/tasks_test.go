package agent

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
)

// Context growth resends a growing prompt: turn i's model call carries
// 1000 + (i−1) × 300 tokens, the growth all input. The agent loop hands
// out exactly those, turn by turn.
func TestContextGrowthTokensPerIteration(t *testing.T) {
	sc := simtest.TasksScenario(t, 1, 1, 4, ", context_growth = 300", "")
	d := &loopDriver{t: t, a: NewAgentLoop(sc, &sc.Strategies[0], []float64{1}, 100)}
	d.a.Begin()
	d.take()
	d.a.Wake(0, 0)
	d.take()
	var got []int64
	for i := range 4 {
		now := time.Duration(i+1) * time.Second
		llm := d.pending[0]
		got = append(got, llm.Calls[0].Tokens)
		if m := llm.Calls[0].Payload.(*CallMeta); m.Output != 200 {
			t.Errorf("turn %d: %d output tokens; want 200 (growth is input)", i+1, m.Output)
		}
		d.answer(now, false) // the model call
		d.answer(now, false) // the tool call
		for _, op := range slices.Clone(d.ops) {
			if op.Kind == OpWake {
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
	d := &loopDriver{t: t, a: NewAgentLoop(sc, &scenarios.Strategy{}, []float64{1}, 100)}
	d.a.Begin()
	d.take()
	d.a.Wake(0, 0)
	d.take()
	d.answer(time.Second, false) // the model call
	d.answer(time.Second, false) // the tool calls
	subs := 0
	for _, p := range d.pending {
		if p.Kind == PartSubTools {
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
	sc := simtest.TasksScenario(t, 1, 1, 10, ", context_growth = 300", "")
	st := sc.Strategies[0]
	st.BatchTurns = 5
	d := &loopDriver{t: t, a: NewAgentLoop(sc, &st, []float64{1}, 100)}
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
			if op.Kind == OpWake {
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
