package sim

import (
	"context"
	"testing"

	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/results"
)

// TestNestedLimitsProjectBucket: the agents' key sets no limit of its own
// and sits in a project of 5 requests a second, under an organisation of
// 50 (a bucket of 50, refilled at 50/s, which 20 arrivals a second never
// empty). The project alone binds, and its bucket is the one
// TestClosedFormLimiterDecisions works out for a service of rps 5: on a
// constant 20/s for 100 s it admits 6 + 498 = 504 of the 2,000, and every
// 429 names the project. results.json splits them so, with the 429 share
// 1,496 / 2,000.
func TestNestedLimitsProjectBucket(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "nested"
seed = 8
duration = "100s"
[workload]
arrival_rate = 20
arrival = "constant"
calls = [ { tool = "t", count = 1 } ]
[services.s]
rps = 50
latency = "10ms"
network_delay = "0s"
keys = [{ key = "sk-agents", project = "p" }, "sk-other"]
[services.s.projects.p]
rps = 5
[tools.t]
service = "s"
[[strategy]]
name = "open"
`)
	res, err := Run(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Strategies[0].Keys["s"]
	want := []results.KeyShare{
		{Key: "sk-agents", Project: "p", Admitted: 504, RateLimited: 1496, RateLimitedShare: 0.748, RateLimitedBy: map[string]int64{"key": 0, "project": 1496, "organization": 0}},
		{Key: "sk-other", RateLimitedBy: map[string]int64{"key": 0, "project": 0, "organization": 0}},
	}
	if len(got) != len(want) {
		t.Fatalf("keys %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Key != w.Key || g.Project != w.Project || g.Admitted != w.Admitted || g.RateLimited != w.RateLimited || g.RateLimitedShare != w.RateLimitedShare ||
			g.RateLimitedBy["key"] != w.RateLimitedBy["key"] || g.RateLimitedBy["project"] != w.RateLimitedBy["project"] || g.RateLimitedBy["organization"] != w.RateLimitedBy["organization"] {
			t.Errorf("key %d: %+v, want %+v", i, g, w)
		}
	}
}
