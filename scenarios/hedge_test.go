package scenarios

import (
	"strings"
	"testing"
	"time"
)

// TestHedgeProblems checks the rules of a strategy's hedge keys, each
// reported with its file, line and key, and that a valid set is read.
func TestHedgeProblems(t *testing.T) {
	const head = "name = \"a\"\nduration = \"1m\"\n[services.s]\nrpm = 60\n"
	const read = "[tools.t]\nservice = \"s\"\nidempotent = true\n"
	const plain = "[tools.t]\nservice = \"s\"\n"
	for _, tc := range []struct{ tool, strategy, want string }{
		{read, `hedge_after = "0s"`, `a.toml:13:1: strategy[0].hedge_after: is 0s; it is the wait before a second attempt`},
		{read, `hedge_after = 5`, `strategy[0].hedge_after: wants a duration string`},
		{read, `hedge_percentile = 1`, `a.toml:13:1: strategy[0].hedge_percentile: is 1; it is the percentile`},
		{read, `hedge_percentile = 1.5`, `strategy[0].hedge_percentile: is 1.5; it is a fraction`},
		{read, "hedge_after = \"1s\"\nhedge_budget = 0", `a.toml:14:1: strategy[0].hedge_budget: is 0, which would send no hedge`},
		{read, `hedge_budget = 0.1`, `strategy[0].hedge_budget: only applies with hedge_after or hedge_percentile`},
		{plain, `hedge_after = "1s"`, `a.toml:12:1: strategy[0].hedge_after: hedges only reads marked idempotent = true, and no tool is one`},
		{plain, `hedge_percentile = 0.9`, `strategy[0].hedge_percentile: hedges only reads marked idempotent = true`},
	} {
		src := head + tc.tool + "[workload]\nsessions = 6\ncalls = [ { tool = \"t\", count = 1 } ]\n[[strategy]]\nname = \"x\"\n" + tc.strategy + "\n"
		_, err := Parse("a.toml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to say %q", tc.strategy, err, tc.want)
		}
	}
	sc, err := Parse("a.toml", []byte(head+read+"[workload]\nsessions = 6\ncalls = [ { tool = \"t\", count = 1 } ]\n"+
		"[[strategy]]\nname = \"x\"\nhedge_after = \"250ms\"\nhedge_percentile = 0.95\nhedge_budget = 0.05\n[[strategy]]\nname = \"y\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if h := sc.Strategies[0].Hedge; h == nil || *h != (Hedge{After: 250 * time.Millisecond, Percentile: 0.95, Budget: 0.05}) {
		t.Errorf("hedge %+v", h)
	}
	if h := sc.Strategies[1].Hedge; h != nil {
		t.Errorf("a strategy without hedge keys has %+v, want nil", h)
	}
	if tool := sc.Tools[0]; tool.Kind != KindRead || !tool.Idempotent {
		t.Errorf("tool %+v, want an idempotent read", tool)
	}
}
