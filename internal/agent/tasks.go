package agent

import (
	"math/rand/v2"
	"time"

	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/satmath"
)

// taskBook keeps a run's agent-level outcomes for the agent loop: the
// tasks its sessions set out to answer (a closed-model session's
// workload.turns turns, else one turn), the model turns that failed for
// reasons of the model, the subagents an orchestrator budget did not
// spawn, and the tokens each service billed. It exists only when the
// scenario models one of them (needTasks), so other runs stay as they
// were. Not safe for concurrent use.
type taskBook struct {
	perSession bool          // a task is a session's turns (else one turn)
	end        time.Duration // tasks that end after it are unfinished
	success    float64       // the chance a model turn succeeds
	retries    int           // model turns made again before a task is abandoned

	begun, completed, failed    int64
	modelFailures, modelRetries int64
	Skipped                     int64
	answer                      *collect.Histogram
	sessionStart                []time.Duration // by session, when perSession
	sessionFailed               []bool
	input, output               []int64 // billed tokens, by service
	priceIn, priceOut           []float64
	services                    []string
}

// needTasks reports whether scenario sc models an agent-level outcome: a
// model turn's success, context growth, an orchestrator budget or a
// priced service.
func needTasks(sc *scenarios.Scenario) bool {
	w := &sc.Workload
	if l := w.LLM; l != nil && (l.Success > 0 || l.ContextGrowth > 0) {
		return true
	}
	if s := w.Subagents; s != nil && (s.OrchestratorBudget > 0 || (s.LLM != nil && s.LLM.ContextGrowth > 0)) {
		return true
	}
	for i := range sc.Services {
		if sc.Services[i].Priced() {
			return true
		}
	}
	return false
}

// newTaskBook returns the book of scenario sc, or nil when it models no
// agent-level outcome.
func newTaskBook(sc *scenarios.Scenario) *taskBook {
	if !needTasks(sc) {
		return nil
	}
	w := &sc.Workload
	b := &taskBook{
		end: sc.Duration, success: w.LLM.SuccessProbability(), answer: collect.NewHistogram(),
		input: make([]int64, len(sc.Services)), output: make([]int64, len(sc.Services)),
	}
	if w.LLM != nil {
		b.retries = w.LLM.Retries
	}
	if w.Sessions > 0 && w.Turns > 0 {
		b.perSession = true
		b.sessionStart = make([]time.Duration, w.Sessions)
		b.sessionFailed = make([]bool, w.Sessions)
	}
	for i := range sc.Services {
		s := &sc.Services[i]
		b.services = append(b.services, s.Name)
		b.priceIn = append(b.priceIn, s.PricePer1kInput)
		b.priceOut = append(b.priceOut, s.PricePer1kOutput)
	}
	return b
}

// turnBegun counts turn t's task as begun when t is its first turn
// (turnNo, from 1, is its number in its session).
func (b *taskBook) turnBegun(t *AgentTurn, turnNo int) {
	if !b.perSession || t.Session < 0 {
		b.begun++
		return
	}
	if turnNo == 1 {
		b.begun++
		b.sessionStart[t.Session] = t.Start
		b.sessionFailed[t.Session] = false
	}
}

// turnEnded records turn t's end at now, failed or not; last says whether
// its task ends with it (its session's last turn, or an abandoned task).
func (b *taskBook) turnEnded(now time.Duration, t *AgentTurn, failed, last bool) {
	start := t.Start
	if b.perSession && t.Session >= 0 {
		if failed {
			b.sessionFailed[t.Session] = true
		}
		if !last {
			return
		}
		failed, start = b.sessionFailed[t.Session], b.sessionStart[t.Session]
	}
	if now > b.end {
		return // unfinished at the end of the run
	}
	if failed {
		b.failed++
		return
	}
	b.completed++
	b.answer.Add(now - start)
}

// modelTurn draws whether turn t's model turn succeeded, from the turn's
// own model stream (seeded at its first draw, so that a run without
// success draws nothing from it and no other stream moves).
func (b *taskBook) modelTurn(t *AgentTurn, seed uint64) bool {
	if b.success >= 1 {
		return true
	}
	if !t.modelSeeded {
		t.modelSeeded = true
		key := uint64(t.No)
		if t.Session >= 0 {
			key = uint64(t.Session)<<32 | uint64(t.sessionTurn)
		}
		t.model = *rand.NewPCG(seed^0x6d0de1, key)
	}
	u := float64(t.model.Uint64()>>11) / (1 << 53) // as rand.Float64
	if u < b.success {
		return true
	}
	b.modelFailures++
	return false
}

// billed counts the tokens of part p's calls that succeeded within the
// run against their services.
func (b *taskBook) billed(p *AgentPart, res []sched.Result) {
	for i := range res {
		r := &res[i]
		if r.Err != nil || r.Finished > b.end || r.Index < 0 || r.Index >= len(p.Calls) {
			continue
		}
		c := &p.Calls[r.Index]
		m, _ := c.Payload.(*CallMeta)
		if m == nil || m.Svc < 0 {
			continue
		}
		b.input[m.Svc] = satmath.Add(b.input[m.Svc], c.Tokens-m.Output)
		b.output[m.Svc] = satmath.Add(b.output[m.Svc], m.Output)
	}
}

// result is the book as results.json's tasks.
func (b *taskBook) result() *results.Tasks {
	r := &results.Tasks{
		Begun: b.begun, Completed: b.completed, FailedTasks: b.failed,
		ModelFailures: b.modelFailures, ModelRetries: b.modelRetries, SkippedSubagents: b.Skipped,
	}
	if b.begun > 0 {
		r.Completion = setup.Round6(float64(b.completed) / float64(b.begun))
	}
	if b.completed > 0 {
		r.TimeToAnswerMs = b.answer.Summary()
	}
	var cost float64
	for i, name := range b.services {
		c := float64(b.input[i])*b.priceIn[i]/1000 + float64(b.output[i])*b.priceOut[i]/1000
		cost += c
		r.InputTokens = satmath.Add(r.InputTokens, b.input[i])
		r.OutputTokens = satmath.Add(r.OutputTokens, b.output[i])
		r.Services = append(r.Services, results.ServiceCost{
			Service: name, InputTokens: b.input[i], OutputTokens: b.output[i],
			PricePer1kInput: b.priceIn[i], PricePer1kOutput: b.priceOut[i], CostUSD: setup.Round6(c),
		})
	}
	r.CostUSD = setup.Round6(cost)
	if b.completed > 0 {
		r.CostPerAnsweredTaskUSD = setup.Round6(cost / float64(b.completed))
	}
	return r
}

// Tasks is the loop's agent-level outcome for results.json, or nil when
// the scenario models none.
func (a *AgentLoop) Tasks() *results.Tasks {
	if a.Book == nil {
		return nil
	}
	return a.Book.result()
}

// ModelFails reports whether the scenario's model turns may fail for
// reasons of the model (workload.llm.success below 1): then results.json's
// tasks carry the model-failed turns and the scheduler's time to answer.
func (a *AgentLoop) ModelFails() bool { return a.Book != nil && a.Book.success < 1 }
