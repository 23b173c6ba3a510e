package fakeapi

import (
	"math/rand/v2"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// Defaults of AgentConfig, used when a field is zero (spec's).
const (
	// DefaultAgentCalls is the tool calls per response when AgentConfig.Calls
	// is nil.
	DefaultAgentCalls = spec.DefaultAgentCalls
	// DefaultAgentIterations is the responses with tool calls per
	// conversation when AgentConfig.MaxIterations is 0.
	DefaultAgentIterations = spec.DefaultAgentIterations
)

// AgentConfig makes a provider-style service drive an agent's loop: see
// spec.Agent, its type and its one validator.
type AgentConfig = spec.Agent

// iterations draws how many responses with tool calls a conversation gets.
func iterations(a *AgentConfig, rng *rand.Rand) int {
	most := a.MaxIterations
	if most == 0 {
		most = DefaultAgentIterations
	}
	n := 1
	for n < most && !(rng.Float64() < a.FinishProbability) {
		n++
	}
	return n
}

// calls draws the tool calls of one response.
func calls(a *AgentConfig, rng *rand.Rand) int {
	if a.Calls == nil {
		return DefaultAgentCalls
	}
	return max(a.Calls(rng), 0)
}

// decideCalls is the fake model's answer to a request with tools; seed is the
// service's stream seed. The conversation's iterations come from the stream
// (seed, conv), each round's calls from a stream of the round's own, so the
// answer does not depend on what else the server has seen. Each call's
// arguments are wire.DistinctArgs for its index, so the parallel calls of
// one answer differ, as a model's do.
func decideCalls(a *AgentConfig, seed uint64, req *wire.AgentRequest, idPrefix string) wire.Reply {
	if len(req.Tools) == 0 || req.Mode == wire.ChoiceNone {
		return wire.Reply{}
	}
	forced := req.Mode == wire.ChoiceRequired || req.Mode == wire.ChoiceNamed
	conv := rand.New(rand.NewPCG(seed, req.Conv))
	if req.Round >= iterations(a, conv) && !forced {
		return wire.Reply{}
	}
	rng := rand.New(rand.NewPCG(seed^uint64(req.Round+1)*0x9e3779b97f4a7c15, req.Conv))
	n := calls(a, rng)
	if n == 0 && !forced {
		return wire.Reply{}
	}
	n = max(n, 1)
	if !req.Parallel {
		n = 1
	}
	out := wire.Reply{Calls: make([]wire.ToolCall, n)}
	for i := range out.Calls {
		t := req.Tools[rng.IntN(len(req.Tools))]
		if req.Mode == wire.ChoiceNamed {
			for _, x := range req.Tools {
				if x.Name == req.Named {
					t = x
					break
				}
			}
		}
		out.Calls[i] = wire.ToolCall{ID: wire.CallID(idPrefix, req.Conv, req.Round, i), Name: t.Name, Args: wire.DistinctArgs(t.Schema, i)}
	}
	return out
}
