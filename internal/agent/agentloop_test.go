package agent

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/spec"
)

// agentScenario is one session of two turns on the closed model, thinking
// 2 s between them: a model call, then three tool calls, then one subagent
// of two iterations of one 100-token call each under a 250-token budget.
func agentScenario() *scenarios.Scenario {
	sc := simtest.Closed(1, 2)
	w := &sc.Workload
	w.Think = spec.Constant(2 * time.Second)
	w.LLM = &scenarios.LLMCall{Service: "s", Tokens: spec.Constant(500.0)}
	w.Calls[0].Count = spec.Constant(3.0)
	w.Subagents = &scenarios.Subagents{Count: spec.Constant(1.0), MaxIterations: 2, TokenBudget: 250,
		Calls: []scenarios.CallGroup{{Tool: "t", Count: spec.Constant(1.0), Probability: 1}}}
	sc.Tools[0].Tokens = spec.Constant(100.0)
	return sc
}

// loopDriver drives an agent loop by hand: it answers each submitted part
// when told, and writes down every op as a line.
type loopDriver struct {
	t       *testing.T
	a       *AgentLoop
	ops     []AgentOp
	log     []string
	pending []*AgentPart // submitted, not yet answered, in order
}

func (d *loopDriver) take() {
	d.ops = d.a.Take(d.ops[:0])
	for i := range d.ops {
		op := &d.ops[i]
		d.log = append(d.log, describeOp(op))
		if op.Kind == OpSubmit {
			d.pending = append(d.pending, op.Part)
		}
	}
}

// answer finishes the oldest pending part at now, its calls failed or not.
func (d *loopDriver) answer(now time.Duration, failed bool) {
	d.t.Helper()
	if len(d.pending) == 0 {
		d.t.Fatalf("at %v: no part to answer", now)
	}
	p := d.pending[0]
	d.pending = d.pending[1:]
	res := make([]sched.Result, len(p.Calls))
	for i := range res {
		res[i] = sched.Result{ID: p.Calls[i].ID, Finished: now}
		if failed {
			res[i].Err, res[i].Class = errors.New("boom"), sched.ClassPermanent
		}
	}
	d.a.Finished(now, p, res)
	d.take()
}

func describeOp(op *AgentOp) string {
	switch op.Kind {
	case OpBegin:
		return fmt.Sprintf("begin turn %d of session %d at %v", op.Turn.No, op.Turn.Session, op.Turn.Start)
	case OpSubmit:
		p := op.Part
		kinds := [...]string{"llm", "tools", "subagent llm", "subagent tools"}
		var tokens int64
		for _, c := range p.Calls {
			tokens += c.Tokens
		}
		return fmt.Sprintf("submit %s: %d calls, %d tokens, budget %d, at %v", kinds[p.Kind], len(p.Calls), tokens, p.Budget, p.At)
	case OpCancel:
		return fmt.Sprintf("cancel a part of turn %d", op.Part.Turn.No)
	case OpCancelAt:
		return fmt.Sprintf("cancel turn %d at %v", op.Turn.No, op.At)
	case OpWake:
		return fmt.Sprintf("wake session %d at %v", op.Session, op.At)
	case OpArrive:
		return fmt.Sprintf("arrive at %v", op.At)
	case OpEnd:
		return fmt.Sprintf("end turn %d, failed %v", op.Turn.No, op.Failed)
	case OpSessionDone:
		return fmt.Sprintf("session %d done", op.Session)
	}
	return "?"
}

// TestAgentLoopSessionExactly drives the agent loop with no scheduler and
// no clock: each part's results are handed in at chosen times, and every
// op it asks for, with its time, is as written below.
func TestAgentLoopSessionExactly(t *testing.T) {
	sc := agentScenario()
	d := &loopDriver{t: t, a: NewAgentLoop(sc, &sc.Strategies[0], []float64{1}, math.MaxInt)}
	ms := time.Millisecond
	d.a.Begin()
	d.take()
	d.a.Wake(0, 0)
	d.take()
	d.answer(500*ms, false)  // the model call
	d.answer(1200*ms, false) // the three tool calls: the subagent starts
	d.answer(1500*ms, false) // its first iteration
	d.answer(1700*ms, false) // its second: the turn ends, the session thinks 2 s
	d.a.Wake(3700*ms, 0)
	d.take()
	d.answer(3900*ms, true) // the second turn's model call fails: so does the turn
	d.a.Wake(5900*ms, 0)    // the session had its two turns
	d.take()
	want := []string{
		"wake session 0 at 0s",
		"begin turn 1 of session 0 at 0s",
		"submit llm: 1 calls, 500 tokens, budget 0, at 0s",
		"submit tools: 3 calls, 300 tokens, budget 0, at 500ms",
		"submit subagent tools: 1 calls, 100 tokens, budget 250, at 1.2s",
		"submit subagent tools: 1 calls, 100 tokens, budget 150, at 1.5s",
		"end turn 1, failed false",
		"wake session 0 at 3.7s",
		"begin turn 2 of session 0 at 3.7s",
		"submit llm: 1 calls, 500 tokens, budget 0, at 3.7s",
		"end turn 2, failed true",
		"wake session 0 at 5.9s",
		"session 0 done",
	}
	if got := strings.Join(d.log, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("ops:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if !d.a.Done() || d.a.Unfinished(0) != 0 || d.a.Err != nil {
		t.Errorf("done %v, unfinished %d, err %v; want done", d.a.Done(), d.a.Unfinished(0), d.a.Err)
	}
}

// TestAgentLoopArrivalsCancelAndCap: open-model arrivals every 400 ms stop
// at the duration; a turn cancelled while its part runs asks for that part
// to be cancelled and starts nothing more; a turn that draws more calls
// than the cap stops the loop with ErrTooLarge.
func TestAgentLoopArrivalsCancelAndCap(t *testing.T) {
	sc := simtest.Queue(2.5, simtest.ConstLatency(10*time.Millisecond), 4, 2)
	sc.Workload.Arrival = scenarios.ArrivalConstant
	sc.Workload.Cancel.ParentTimeout = 300 * time.Millisecond
	sc.Duration = time.Second
	d := &loopDriver{t: t, a: NewAgentLoop(sc, &sc.Strategies[0], []float64{1}, math.MaxInt)}
	ms := time.Millisecond
	d.a.Begin()
	d.take()
	d.a.Arrive(0)
	d.take()
	d.a.Cancel(300*ms, d.pending[0].Turn)
	d.take()
	d.answer(310*ms, true) // the cancelled part's results
	d.a.Arrive(400 * ms)
	d.take()
	d.answer(450*ms, false)
	d.a.Arrive(800 * ms) // the next would come at 1.2 s, after the end
	d.take()
	d.answer(900*ms, false)
	want := []string{
		"arrive at 0s",
		"begin turn 1 of session -1 at 0s",
		"cancel turn 1 at 300ms",
		"submit tools: 1 calls, 0 tokens, budget 0, at 0s",
		"arrive at 400ms",
		"cancel a part of turn 1",
		"end turn 1, failed true",
		"begin turn 2 of session -1 at 400ms",
		"cancel turn 2 at 700ms",
		"submit tools: 1 calls, 0 tokens, budget 0, at 400ms",
		"arrive at 800ms",
		"end turn 2, failed false",
		"begin turn 3 of session -1 at 800ms",
		"cancel turn 3 at 1.1s",
		"submit tools: 1 calls, 0 tokens, budget 0, at 800ms",
		"end turn 3, failed false",
	}
	if got := strings.Join(d.log, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("ops:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if !d.a.Done() {
		t.Error("the loop is not done after the last arrival's turn")
	}

	sc.Workload.Calls[0].Count = spec.Constant(3.0)
	capped := NewAgentLoop(sc, &sc.Strategies[0], []float64{1}, 2)
	capped.Begin()
	capped.Arrive(0)
	if !errors.Is(capped.Err, ErrTooLarge) {
		t.Errorf("a turn of 3 calls under a cap of 2: err %v, want ErrTooLarge", capped.Err)
	}
}

// A turn is reused only once nothing of it can still run: recycle panics
// on a turn not ended, one a cancel event still holds, one with a part
// running or a late part of its progressive join still running, and on a
// turn given back twice.
func TestRecycleRefusesATurnThatCanStillRun(t *testing.T) {
	refused := func(tr *AgentTurn) (msg any) {
		defer func() { msg = recover() }()
		(&AgentLoop{}).Recycle(tr)
		return nil
	}
	for _, s := range []TurnState{
		{},
		{Ended: true, Held: 1},
		{Ended: true, Parts: 1},
		{Ended: true, Late: 1},
	} {
		if refused(&AgentTurn{TurnState: s}) == nil {
			t.Errorf("recycle took a turn that can still run: ended %v, %d cancels pending, %d parts running, %d late", s.Ended, s.Held, s.Parts, s.Late)
		}
	}
	a := &AgentLoop{}
	tr := &AgentTurn{TurnState: TurnState{Ended: true}}
	a.Recycle(tr)
	if len(a.SpareTurns) != 1 {
		t.Fatalf("recycle kept %d turns of an idle one; want 1", len(a.SpareTurns))
	}
	if msg := refused(tr); msg == nil {
		t.Error("recycle took a turn given back already")
	}
	// release recycles only an idle turn.
	a.Release(&AgentTurn{TurnState: TurnState{Ended: true, Late: 1}})
	a.Release(&AgentTurn{TurnState: TurnState{Ended: true}})
	if len(a.SpareTurns) != 2 {
		t.Errorf("release kept %d turns; want 2 (the first and the idle one)", len(a.SpareTurns))
	}
}
