package scenarios

import (
	"math/bits"
	"time"

	"github.com/simbench/simbench/spec"
)

// Workload says what the agents do: how turns begin (closed or open model)
// and what calls each turn makes. Exactly one model is set: Sessions > 0
// (closed) or ArrivalRate > 0 (open).
type Workload struct {
	// Sessions is the number of concurrent agent sessions in the closed model;
	// each loops: turn, think, turn, … (0 in the open model).
	Sessions int
	// Turns is turns per session in the closed model; 0 means sessions keep
	// going until Duration ends.
	Turns int
	// Think is the pause between a session's turns (closed model; zero
	// distribution when unset).
	Think spec.Dist[time.Duration]
	// Ramp spreads the closed model's session starts evenly over the run's
	// first Ramp: session i of n starts at i × Ramp ÷ n. Zero starts every
	// session at once.
	Ramp time.Duration

	// Arrival is the open model's arrival process ("" in the closed model).
	// Each arrival is one turn; latency counts from the intended arrival time.
	Arrival Arrival
	// ArrivalRate is turns per second in the open model (0 in the closed model).
	ArrivalRate float64

	// LLM, when set, is a model call made at the start of every turn, before
	// its tool calls are issued.
	LLM *LLMCall
	// Calls are the groups of tool calls a turn emits, in file order. Empty
	// only when LLM is set.
	Calls []CallGroup
	// Subagents, when set, makes each turn an orchestrator turn that starts
	// subagents after its own calls (multi-agent).
	Subagents *Subagents
	// Cancel holds user cancels and the parent's timeout (zero: none).
	Cancel Cancel

	// Classes divides the closed model's sessions into classes (key
	// classes), in file order, that a strategy's priority table ranks
	// (nil: one class).
	Classes []SessionClass `json:",omitempty"`

	// Processes is the number of agent processes (replicas, workers) that
	// run the workload behind the same API keys, each with a scheduler of
	// its own: ≥ 1, and 1 when unset (one process, one scheduler). The
	// sessions (closed model) or arrivals (open model) are divided among
	// them by ProcessShares; each strategy's Quota says how they divide the
	// services' limits.
	Processes int `json:",omitempty"`
	// ProcessShares weighs the load across the processes: one weight > 0
	// per process (nil: even). A closed model's sessions are apportioned by
	// it exactly (ProcessSessions); an open model's arrivals go to process
	// p with probability share_p, drawn per arrival.
	ProcessShares []float64 `json:",omitempty"`
}

// ModelOnly reports whether the workload makes model calls only: no tool
// calls in its turns nor in its subagents' iterations. Such a workload's
// model calls are its calls, counted as tool calls are in every figure of
// calls (calls, attempts, goodput); a workload with tool calls counts
// those alone, its model calls being a turn's thinking, not its work.
func (w *Workload) ModelOnly() bool {
	return len(w.Calls) == 0 && (w.Subagents == nil || len(w.Subagents.Calls) == 0)
}

// SessionStart is when closed-model session i (0 ≤ i < Sessions) begins:
// i × Ramp ÷ Sessions into the run, rounded down. The product is taken in
// 128 bits, so it cannot overflow (200,000 sessions over a 24 h ramp pass
// the range of a Duration).
func (w *Workload) SessionStart(i int) time.Duration {
	if w.Sessions <= 0 || i <= 0 || w.Ramp <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(i), uint64(w.Ramp))
	if hi >= uint64(w.Sessions) { // i ≥ Sessions: past the ramp
		return w.Ramp
	}
	q, _ := bits.Div64(hi, lo, uint64(w.Sessions))
	return time.Duration(q)
}

// Arrival is an open-model arrival process.
type Arrival string

const (
	// ArrivalPoisson spaces turns by exponential gaps with mean 1/ArrivalRate.
	ArrivalPoisson Arrival = "poisson"
	// ArrivalConstant spaces turns exactly 1/ArrivalRate apart.
	ArrivalConstant Arrival = "constant"
)

// LLMCall is a model call to a service, as one request.
type LLMCall struct {
	// Service names the service the call goes to (a key of [services]).
	Service string
	// Tokens is the call's token cost (prompt + output), drawn per call;
	// charged against the service's TokensPerMinute.
	Tokens spec.Dist[float64]
	// Output is the output part of Tokens, in tokens, drawn per call and
	// capped at that call's Tokens draw (key output_tokens; the zero Dist:
	// none, every token is input). The service paces it by its
	// tokens_per_s and charges it against output_tpm; the rest of Tokens
	// is input.
	Output spec.Dist[float64] `json:",omitzero"`
	// Success is the chance a model turn succeeds for reasons of the
	// model (a right step, not only an answered request), in (0, 1] (key
	// success; 0 when unset, which means 1: every answered call is a right
	// step). Drawn per model turn from a stream of its own, so setting it
	// moves no other draw. Only workload.llm has it.
	Success float64 `json:",omitempty"`
	// Retries is how many times a model turn that failed for reasons of
	// the model is made again before its task is abandoned (key retries; 0:
	// abandoned at the first failure). Only with Success.
	Retries int `json:",omitempty"`
	// ContextGrowth is the tokens the call's prompt grows by each
	// iteration (key context_growth; 0: none): iteration i (the session's
	// turn i, or the subagent's iteration i, from 1) sends Tokens +
	// (i−1) × ContextGrowth tokens, the growth all input.
	ContextGrowth int64 `json:",omitempty"`
}

// SuccessProbability is the chance a model turn succeeds: Success, or 1
// when unset.
func (c *LLMCall) SuccessProbability() float64 {
	if c == nil || c.Success == 0 {
		return 1
	}
	return c.Success
}

// CallGroup is a set of tool calls a turn emits. Either Tool or Mix is set.
type CallGroup struct {
	// Tool is the tool every call of the group uses ("" when Mix is set).
	Tool string
	// Mix picks each call's tool at random by weight ("" Tool); file order.
	Mix []Weighted
	// Count is how many calls the group emits per turn, drawn per turn and
	// rounded to a whole number ≥ 0.
	Count spec.Dist[float64]
	// Probability is the chance the group appears in a turn at all, in [0, 1]
	// (1 when unset). A group with Probability 0.1 models a model that
	// sometimes emits it.
	Probability float64
	// After lists tools whose calls in the same turn must all succeed before
	// this group's calls start (sched.Call.After). Every name is the tool of
	// another group in the same list (or in its mix), and the lists form no
	// cycle.
	After []string
}

// Weighted is a tool and its relative weight in a mix (> 0).
type Weighted struct {
	// Tool is the tool's name; Weight its relative weight, > 0 (the
	// chance of drawing it is Weight over the mix's total).
	Tool   string
	Weight float64
}

// Tools returns the tools the group can emit, in file order.
func (g *CallGroup) Tools() []string {
	if g.Tool != "" {
		return []string{g.Tool}
	}
	names := make([]string, len(g.Mix))
	for i, w := range g.Mix {
		names[i] = w.Tool
	}
	return names
}

// Subagents describes the subagents an orchestrator turn fans out to. Each
// subagent loops iterations (an optional LLM call, then its calls) until it
// reaches MaxIterations, spends TokenBudget, or finishes by chance; the
// orchestrator's turn ends when the last subagent ends.
type Subagents struct {
	// Count is the subagents started per orchestrator turn (whole number ≥ 1
	// per draw).
	Count spec.Dist[float64]
	// MaxIterations caps each subagent's iterations (≥ 1).
	MaxIterations int
	// TokenBudget caps the tokens one subagent may spend over all its
	// iterations, in tokens (0: no budget). Map each iteration onto
	// sched.Turn.TokenBudget = what is left.
	TokenBudget int64
	// OrchestratorBudget caps the tokens a whole orchestrator turn may
	// spend, its own calls and every subagent's together, in tokens (key
	// orchestrator_budget; 0: none). It is checked before each subagent is
	// spawned (one is spawned only while the turn's spent tokens plus the
	// TokenBudget of each subagent already spawned leave room for its
	// TokenBudget, or for any token when TokenBudget is 0) and before each
	// subagent iteration (none starts once the turn has spent it).
	OrchestratorBudget int64 `json:",omitempty"`
	// FinishProbability is the chance a subagent is done after each
	// iteration, in [0, 1] (0: it always runs MaxIterations).
	FinishProbability float64
	// LLM is the call at the start of every iteration (nil: none).
	LLM *LLMCall
	// Calls are each iteration's tool calls, as Workload.Calls.
	Calls []CallGroup
}

// Cancel describes turns that end early from outside the scheduler.
type Cancel struct {
	// Probability is the chance the user cancels a turn, in [0, 1].
	Probability float64
	// After is when a cancelling user cancels, counted from the turn's start
	// (required when Probability > 0).
	After spec.Dist[time.Duration]
	// ParentTimeout is the deadline the caller puts on each turn, after which
	// it cancels the turn whatever the strategy's own timeouts (0: none).
	ParentTimeout time.Duration
}
