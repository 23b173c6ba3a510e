package agent

import (
	"time"

	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/satmath"
)

// The subagent steps of the agent loop: a subagent's iterations, their
// calls within its token budget, and room for another subagent in a turn.

// iterate starts a subagent's next iteration. Iterations that make no call
// follow one another in a loop, not by recursion, so a subagent of many
// empty iterations cannot exhaust the stack.
func (a *AgentLoop) iterate(now time.Duration, t *AgentTurn, s *subagent) {
	sg := a.wl.sub
	for {
		s.iteration++
		if sg.llm != nil {
			calls := a.wl.llmCall(t.rng, sg.llm, &a.serial, &t.spare)
			grow(calls, sg.llm, s.iteration, 1)
			a.submit(now, t, partSubLLM, s, calls, a.budgeted(s, calls))
			return
		}
		if a.subCalls(now, t, s) || a.subDone(t, s) {
			return
		}
	}
}

// subTools submits a subagent iteration's tool calls after its model call,
// or moves on when it makes none.
func (a *AgentLoop) subTools(now time.Duration, t *AgentTurn, s *subagent) {
	if !a.subCalls(now, t, s) {
		a.afterIteration(now, t, s)
	}
}

// subCalls submits a subagent iteration's tool calls and reports whether it
// made any (or the run failed).
func (a *AgentLoop) subCalls(now time.Duration, t *AgentTurn, s *subagent) bool {
	calls, err := a.wl.callsUpTo(t.rng, a.wl.sub.groups, 1, a.serialize, &a.serial, a.MaxTurnCalls, &t.spare)
	if err != nil {
		a.fail(err)
		return true
	}
	if len(calls) == 0 {
		return false
	}
	a.submit(now, t, PartSubTools, s, calls, a.budgeted(s, calls))
	return true
}

// budgeted returns a subagent's remaining token budget as the budget of
// its next sched turn (0: none), and counts that turn's estimated tokens
// as spent.
func (a *AgentLoop) budgeted(s *subagent, calls []sched.Call) int64 {
	var budget int64
	if b := a.wl.sub.budget; b > 0 {
		budget = max(1, b-s.spent)
	}
	for i := range calls {
		s.spent = satmath.Add(s.spent, calls[i].Tokens)
	}
	return budget
}

// afterIteration ends a subagent or starts its next iteration.
func (a *AgentLoop) afterIteration(now time.Duration, t *AgentTurn, s *subagent) {
	if !a.subDone(t, s) {
		a.iterate(now, t, s)
	}
}

// subDone reports whether a subagent ends after its current iteration: its
// iterations or its budget are spent, or it draws its finish.
func (a *AgentLoop) subDone(t *AgentTurn, s *subagent) bool {
	sg := a.wl.sub
	return s.iteration >= sg.maxIterations || (sg.budget > 0 && s.spent >= sg.budget) ||
		(sg.orchestrator > 0 && t.spent >= sg.orchestrator) ||
		(sg.finish > 0 && t.rng.Float64() < sg.finish)
}

// roomForSubagent checks turn t's orchestrator budget before it spawns a
// subagent: the tokens it spent and the budgets of the subagents it
// spawned must leave room for the new one's token_budget (for any token,
// without one). With room, it reserves that budget.
func (a *AgentLoop) roomForSubagent(t *AgentTurn) bool {
	sg := a.wl.sub
	if sg.orchestrator == 0 {
		return true
	}
	need := max(sg.budget, 1)
	if satmath.Add(satmath.Add(t.spent, t.reserved), need) > sg.orchestrator {
		return false
	}
	t.reserved = satmath.Add(t.reserved, sg.budget)
	return true
}
