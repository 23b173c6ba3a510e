package setup

import (
	"math/rand/v2"
	"testing"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
)

func TestAgentConfigFollowsTheWorkload(t *testing.T) {
	open := func(name string) *scenarios.Scenario {
		sc, err := scenarios.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	rng := rand.New(rand.NewPCG(1, 2))

	// research-agent: every turn's model call on llm is followed by 8
	// lookups; sessions have no turn count, so the default iterations.
	ra := open("research-agent")
	a := AgentConfig(ra, "llm")
	if a.Calls == nil || a.MaxIterations != 0 || a.FinishProbability != 0 {
		t.Fatalf("research-agent llm: %+v", a)
	}
	for range 20 {
		if n := a.Calls(rng); n != 8 {
			t.Fatalf("research-agent draws %d calls, want 8", n)
		}
	}
	if s := AgentConfig(ra, "sources"); s.Calls != nil {
		t.Fatalf("a tool service drives no agent loop: %+v", s)
	}
	for i := range ra.Services {
		c := ServeConfig(ra, &ra.Services[i])
		if (c.Agent.Calls != nil) != (c.Name == "llm") {
			t.Fatalf("ServeConfig of %s: agent %+v", c.Name, c.Agent)
		}
	}

	// multi-agent: the orchestrator's model call makes no tool calls; the
	// subagents' iterations on the same service make 1 to 4, for up to 8
	// iterations, done after each with probability 0.25.
	ma := open("multi-agent")
	m := AgentConfig(ma, "model")
	if m.Calls == nil || m.MaxIterations != 8 || m.FinishProbability != 0.25 {
		t.Fatalf("multi-agent model: %+v", m)
	}
	seen := map[int]bool{}
	for range 200 {
		n := m.Calls(rng)
		if n < 1 || n > 4 {
			t.Fatalf("multi-agent draws %d calls, want 1 to 4", n)
		}
		seen[n] = true
	}
	if len(seen) != 4 {
		t.Fatalf("multi-agent draws %v over 200 turns, want each of 1 to 4", seen)
	}

	// tier3 models no model call: a client's own model calls to its
	// OpenAI-style service get one turn's 8 lookups.
	t3 := AgentConfig(open("tier3"), "openai")
	if t3.Calls == nil || t3.Calls(rng) != 8 {
		t.Fatalf("tier3 openai: %+v", t3)
	}
}

func TestAgentConfigGroupProbability(t *testing.T) {
	// Two groups: 3 calls always, 10 more one turn in four.
	calls := CallsPerTurn([]scenarios.CallGroup{
		{Tool: "a", Count: spec.Constant(3.0), Probability: 1},
		{Tool: "b", Count: spec.Constant(10.0), Probability: 0.25},
	})
	rng := rand.New(rand.NewPCG(3, 4))
	counts := map[int]int{}
	for range 4000 {
		counts[calls(rng)]++
	}
	if len(counts) != 2 || counts[3]+counts[13] != 4000 || counts[13] < 850 || counts[13] > 1150 {
		t.Fatalf("calls per turn %v: want 3 or 13, 13 about a quarter of the time", counts)
	}
}
