package spec

import "math/rand/v2"

// Defaults of Agent, used when a field is zero.
const (
	// DefaultAgentCalls is the tool calls per response when Agent.Calls is
	// nil.
	DefaultAgentCalls = 1
	// DefaultAgentIterations is the responses with tool calls per
	// conversation when Agent.MaxIterations is 0.
	DefaultAgentIterations = 1
)

// Agent makes a provider-style service drive an agent's loop. When a
// request carries tools, the service answers with tool calls: their number
// drawn by Calls, their names drawn from the request's tools, their
// arguments the smallest JSON object the tool's schema accepts. When the
// tool results come back it calls tools again, until the conversation has
// had its iterations (MaxIterations, or fewer by FinishProbability); then it
// answers in text. Every draw comes from a stream derived from the server's
// seed, the service and a hash of the conversation's first message, so a
// conversation replays the same way whatever else runs. The zero value makes
// one call, once. Problems is its one validator.
type Agent struct {
	// Calls draws the tool calls of one response (the fan-out) from rng;
	// nil: DefaultAgentCalls. A draw of 0 answers in text, unless the request
	// requires a tool call (then 1). It must be safe for concurrent use; it
	// is called with a stream of its own each time.
	Calls func(rng *rand.Rand) int
	// MaxIterations is the most responses with tool calls a conversation
	// gets before the model answers in text (0: DefaultAgentIterations).
	MaxIterations int
	// FinishProbability is the chance the model is done after each response
	// with tool calls, in [0, 1] (0: it always runs MaxIterations).
	FinishProbability float64
	// Answer is the distribution of a text answer's output tokens, capped
	// at the request's max_tokens (zero: fakeapi.DefaultAnswerTokens). A
	// tool-call answer's tokens are its serialized calls'.
	Answer Dist[float64]
}

// Problems returns what is wrong with the agent loop, keyed as a scenario
// file's subagents table spells the keys: max_iterations must not be
// negative and finish_probability must be in [0, 1].
func (a Agent) Problems() []Problem {
	ps := &problems{}
	if a.MaxIterations < 0 {
		ps.add("max_iterations", "is negative (%d)", a.MaxIterations)
	}
	if !(a.FinishProbability >= 0 && a.FinishProbability <= 1) {
		ps.add("finish_probability", "%v is outside [0, 1]", a.FinishProbability)
	}
	return ps.list
}
