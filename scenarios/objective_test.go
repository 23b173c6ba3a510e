package scenarios

import (
	"strings"
	"testing"
)

// TestObjective reads the objective key, defaults it to the p95 time to
// answer, and reports a bad value, or a cost objective with nothing
// priced, with its file, line and key.
func TestObjective(t *testing.T) {
	const head = "name = \"a\"\nduration = \"1m\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\", count = 1 } ]\n[tools.t]\nservice = \"s\"\n[[strategy]]\nname = \"x\"\n[services.s]\nrpm = 60\n"
	sc, err := Parse("a.toml", []byte(head))
	if err != nil || sc.Objective != "" {
		t.Fatalf("no objective: %v, %q; want the default", err, sc.Objective)
	}
	sc, err = Parse("a.toml", []byte("objective = \"completion\"\n"+head))
	if err != nil || sc.Objective != ObjectiveCompletion {
		t.Fatalf("completion: %v, %q", err, sc.Objective)
	}
	priced := head + "price_per_1k_input = 0.001\n"
	if sc, err = Parse("a.toml", []byte("objective = \"cost_per_answered_task\"\n"+priced)); err != nil || sc.Objective != ObjectiveCost {
		t.Fatalf("cost: %v, %q", err, sc.Objective)
	}
	for _, tc := range []struct{ give, want string }{
		{`objective = "p99"`, `a.toml:1:1: objective: unknown value "p99"`},
		{`objective = "cost_per_answered_task"`, `a.toml:1:1: objective: is "cost_per_answered_task" but no service has a price`},
	} {
		_, err := Parse("a.toml", []byte(tc.give+"\n"+head))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to say %q", tc.give, err, tc.want)
		}
	}
}
