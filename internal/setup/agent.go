package setup

import (
	"math"
	"math/rand/v2"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// AgentConfig is the agent loop a scenario describes for the model calls
// to service: each response to a request that carries tools makes as many
// tool calls as one turn of the workload (its call groups' counts, each
// group present with its probability), for as many iterations as a session
// has turns (workload.turns; 0: fakeapi.DefaultAgentIterations). When the
// turns' model calls go elsewhere and the subagents' go to service, it is a
// subagent's iteration instead: its calls, its max_iterations and its
// finish_probability. A text answer's length is drawn from the model
// call's output tokens. When the workload has no model call at all (tier3),
// every provider-style service drives the loop with the turns' calls; else
// a service no model call goes to gets the zero value.
func AgentConfig(sc *scenarios.Scenario, service string) fakeapi.AgentConfig {
	w := &sc.Workload
	if w.LLM != nil && w.LLM.Service == service && len(w.Calls) > 0 {
		return fakeapi.AgentConfig{Calls: CallsPerTurn(w.Calls), MaxIterations: w.Turns, Answer: w.LLM.Output}
	}
	if s := w.Subagents; s != nil && s.LLM != nil && s.LLM.Service == service && len(s.Calls) > 0 {
		return fakeapi.AgentConfig{Calls: CallsPerTurn(s.Calls), MaxIterations: s.MaxIterations, FinishProbability: s.FinishProbability, Answer: s.LLM.Output}
	}
	if w.LLM == nil && (w.Subagents == nil || w.Subagents.LLM == nil) && len(w.Calls) > 0 {
		// The workload models no model call: a client's own model calls
		// to a provider-style service get one turn's tool calls.
		if svc := sc.Service(service); svc != nil && (svc.Headers == spec.HeadersOpenAI || svc.Headers == spec.HeadersAnthropic) {
			return fakeapi.AgentConfig{Calls: CallsPerTurn(w.Calls), MaxIterations: w.Turns}
		}
	}
	return fakeapi.AgentConfig{}
}

// CallsPerTurn draws the calls of one turn as the workload does: each group
// appears with its probability and adds its count.
func CallsPerTurn(gs []scenarios.CallGroup) func(*rand.Rand) int {
	type g struct {
		count *Sampler
		prob  float64
	}
	groups := make([]g, len(gs))
	for i, x := range gs {
		groups[i] = g{NewSampler(x.Count), x.Probability}
	}
	return func(rng *rand.Rand) int {
		var n int64
		for _, x := range groups {
			if x.prob < 1 && rng.Float64() >= x.prob {
				continue
			}
			n = satmath.Add(n, int64(x.count.Count(rng)))
		}
		return int(min(n, math.MaxInt32))
	}
}
