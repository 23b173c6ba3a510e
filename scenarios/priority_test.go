package scenarios

import (
	"strings"
	"testing"
)

// TestPriorityProblems checks the rules of workload classes and strategy
// priority tables, each reported with its line and key.
func TestPriorityProblems(t *testing.T) {
	const head = "name = \"a\"\nduration = \"1m\"\n[services.s]\nrpm = 60\n[tools.t]\nservice = \"s\"\n"
	const classes = `classes = [ { name = "i", sessions = 2 }, { name = "b", sessions = 4 } ]` + "\n"
	for _, tc := range []struct{ wl, strategy, want string }{
		{`classes = [ { name = "i", sessions = 2 } ]` + "\n", "", "a.toml:10:1: workload.classes: give 2 sessions in all, but sessions = 6"},
		{`classes = [ { name = "i", sessions = 3 }, { name = "i", sessions = 3 } ]` + "\n", "", `workload.classes[1].name: class "i" is listed twice`},
		{`classes = [ { sessions = 6 } ]` + "\n", "", "workload.classes[0]: missing name"},
		{`classes = [ { name = "i", sessions = 0 } ]` + "\n", "", "workload.classes[0].sessions: is 0"},
		{"", `priority = [ { class = "i" } ]`, "strategy[0].priority: ranks the workload's session classes, and it has none"},
		{classes, `priority = [ { class = "i" }, { class = "x" } ]`, `strategy[0].priority[1].class: names class "x", which [workload] classes does not list (it lists "i", "b")`},
		{classes, `priority = [ { class = "i" } ]`, `strategy[0].priority: does not rank class "b"`},
		{classes, `priority = [ { class = "i", share = 0.7 }, { class = "b", share = 0.6 } ]`, "shares add up to 1.3, more than 1"},
		{classes, `priority = [ { class = "i", share = 1.5 }, { class = "b" } ]`, "strategy[0].priority[0].share:"},
		{classes, `priority = [ { class = "i", weight = 1 }, { class = "b" } ]`, "weight"},
	} {
		src := head + "[workload]\nsessions = 6\ncalls = [ { tool = \"t\", count = 1 } ]\n" + tc.wl + "[[strategy]]\nname = \"x\"\n" + tc.strategy + "\n"
		_, err := Parse("a.toml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %q: error %v, want it to say %q", tc.wl, tc.strategy, err, tc.want)
		}
	}
	sc, err := Parse("a.toml", []byte(head+"[workload]\nsessions = 6\ncalls = [ { tool = \"t\", count = 1 } ]\n"+classes+
		"[[strategy]]\nname = \"x\"\npriority = [ { class = \"b\", share = 0.5 }, { class = \"i\" } ]\n[[strategy]]\nname = \"y\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	w := &sc.Workload
	if got := []int{w.ClassOf(0), w.ClassOf(1), w.ClassOf(2), w.ClassOf(5)}; got[0] != 0 || got[1] != 0 || got[2] != 1 || got[3] != 1 {
		t.Errorf("classes of sessions 0, 1, 2, 5: %v, want [0 0 1 1]", got)
	}
	if p := sc.Strategies[0].Priority; len(p) != 2 || p[0] != (Priority{"b", 0.5}) || p[1] != (Priority{"i", 0}) {
		t.Errorf("priority %+v", p)
	}
	if p := sc.Strategies[1].Priority; p != nil {
		t.Errorf("a strategy without priority has %+v, want nil", p)
	}
}
