package scenarios

import (
	"strings"
	"testing"
)

// The agent-level outcome keys are checked by the one validator: every
// problem at once, each at its file, line and key.
func TestOutcomeKeyProblems(t *testing.T) {
	src := `name = "bad-outcomes"
duration = "1m"
[workload]
arrival_rate = "1/s"
llm = { service = "m", tokens = 100, success = 0, context_growth = 10 }
subagents = { count = 1, max_iterations = 3, orchestrator_budget = -1, llm = { service = "m", success = 0.5, retries = 1, context_growth = 60_000_000 } }
calls = [ { tool = "t" } ]
[services.m]
price_per_1k_input = -0.5
price_per_1k_output = 5000
[tools.t]
service = "m"
[[strategy]]
name = "s"
batch_turns = 20_000
`
	_, err := Parse("bad.toml", []byte(src))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`bad.toml:5:38: workload.llm.success: is 0, so every model turn would fail`,
		`bad.toml:5:51: workload.llm.context_growth: needs sessions and turns = N`,
		`workload.subagents.orchestrator_budget: is -1; it must be at least 0`,
		`workload.subagents.llm.retries: only applies to workload.llm with success`,
		`workload.subagents.llm.context_growth: grows the call to 120000000 tokens by iteration 3`,
		`workload.subagents.llm.success: only applies to workload.llm`,
		`bad.toml:9:1: services.m.price_per_1k_input: is -0.5; it must be greater than 0`,
		`bad.toml:10:1: services.m.price_per_1k_output: is 5000; it must be at most 1000`,
		`bad.toml:15:1: strategy[0].batch_turns: is 20000; it must be at most 10000`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no problem %q in:\n%v", want, err)
		}
	}
}

// A valid file reads its outcome keys as given, and batch_turns whose
// wide turn would pass the most calls of a turn is refused.
func TestOutcomeKeys(t *testing.T) {
	src := `name = "outcomes"
duration = "1m"
[workload]
sessions = 2
turns = 10
llm = { service = "m", tokens = 100, success = 0.85, retries = 1, context_growth = 50 }
calls = [ { tool = "t", count = 4000 } ]
[services.m]
price_per_1k_input = 0.25
[tools.t]
service = "m"
[[strategy]]
name = "narrow"
[[strategy]]
name = "wide"
batch_turns = 3
`
	_, err := Parse("wide.toml", []byte(src))
	if want := `wide.toml:16:1: strategy[1].batch_turns: makes a turn of up to 12000 calls (3 × 4000)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v; want %q", err, want)
	}
	sc, err := Parse("ok.toml", []byte(strings.Replace(src, "batch_turns = 3", "batch_turns = 2", 1)))
	if err != nil {
		t.Fatal(err)
	}
	l := sc.Workload.LLM
	if l.Success != 0.85 || l.Retries != 1 || l.ContextGrowth != 50 || sc.Services[0].PricePer1kInput != 0.25 || !sc.Services[0].Priced() {
		t.Errorf("llm %+v, service %+v", l, sc.Services[0])
	}
	if sc.Strategies[0].Batch() != 1 || sc.Strategies[1].Batch() != 2 {
		t.Errorf("batches %d, %d; want 1, 2", sc.Strategies[0].Batch(), sc.Strategies[1].Batch())
	}
}

// progressive_join is checked by the same validator, each problem at its
// file, line and key: first and share both or neither, a share of 0, an
// unknown late, and a workload without tool calls.
func TestProgressiveJoinProblems(t *testing.T) {
	src := `name = "bad-join"
duration = "1m"
[workload]
arrival_rate = "1/s"
llm = { service = "m", tokens = 100 }
[services.m]
[[strategy]]
name = "both"
progressive_join = { first = 2, share = 0.5 }
[[strategy]]
name = "neither"
progressive_join = { late = "keep" }
[[strategy]]
name = "zero"
progressive_join = { share = 0, frist = 1 }
`
	_, err := Parse("bad.toml", []byte(src))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`bad.toml:9:33: strategy[0].progressive_join.share: and first both say when the turn moves on; keep one of them`,
		`bad.toml:9:1: strategy[0].progressive_join: needs a workload whose turns make tool calls (workload.calls)`,
		`bad.toml:12:1: strategy[1].progressive_join: needs first or share`,
		`strategy[1].progressive_join.late: unknown value "keep"; use one of "fold", "drop"`,
		`strategy[2].progressive_join.share: is 0; the turn would move on before any call answered`,
		`strategy[2].progressive_join.frist: unknown key; did you mean "first"?`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no problem %q in:\n%v", want, err)
		}
	}
	ok := strings.Replace(src, "llm = { service = \"m\", tokens = 100 }", "calls = [ { tool = \"t\", count = 4 } ]\n[tools.t]\nservice = \"m\"", 1)
	ok = ok[:strings.Index(ok, "[[strategy]]\nname = \"both\"")] + "[[strategy]]\nname = \"j\"\nprogressive_join = { share = 0.8, late = \"drop\" }\n"
	sc, err := Parse("ok.toml", []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	j := sc.Strategies[0].ProgressiveJoin
	if j == nil || j.Share != 0.8 || j.Late != JoinLateDrop || j.Need(10) != 8 || j.Need(4) != 4 || j.Need(1) != 1 {
		t.Errorf("progressive_join read as %+v (need of 10: %d)", j, j.Need(10))
	}
}
