package decision

import (
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// A configuration measured in two steps (a pace tried at a cap over 3
// seeds, then the same runs grown to 6 seeds by a sweep at that pace) is
// weighed once, on its 6 seeds, and the earlier point is brought up to
// date: its first 3 seeds alone (p95 100 ms) would make it look the best.
func TestMeasuredConfigsTakeTheLatestPoint(t *testing.T) {
	r := Rule{MaxShare: DefaultMaxRateLimitedShare}
	early := seeded(4, 100, 100, 100)
	late := seeded(4, 100, 100, 100, 160, 160, 160)
	a := &tuning{name: "s", headroom: 0.7, pacePts: []results.SweepPoint{early}, paces: []results.Outcome{{Headroom: 0.9}}}
	a.sw.row.Points = []results.SweepPoint{seeded(2, 120, 120, 120)}
	b := &tuning{name: "s", headroom: 0.9}
	b.sw.row.Points = []results.SweepPoint{late}
	ms := measuredConfigs([]*tuning{a, b}, nil, r)
	if len(ms) != 2 {
		t.Fatalf("%d configurations, want 2 (cap 2 at 0.7, cap 4 at 0.9): %+v", len(ms), ms)
	}
	for _, m := range ms {
		if m.p.Cap == 4 && len(m.p.PerSeed) != 6 {
			t.Errorf("cap 4 at headroom 0.9 weighed on %d seeds, want 6", len(m.p.PerSeed))
		}
	}
	if got := len(a.pacePts[0].PerSeed); got != 6 {
		t.Errorf("the pace point holds %d seeds, want the latest 6", got)
	}
	if best := bestConfig(ms, r); best.p.Cap != 2 {
		t.Errorf("best cap %d, want 2 (p95 120 ms against cap 4's 130)", best.p.Cap)
	}
}

// setBest sets the lowest-scoring configuration measured: on the tuning of
// its strategy and pace, its point added to the row when no sweep ran that
// cap; else on a tuning made for it.
func TestSetBestSetsTheLowestScoringConfiguration(t *testing.T) {
	r := Rule{MaxShare: DefaultMaxRateLimitedShare}
	sc, err := scenarios.Parse("s.toml", []byte(`name = "s"
duration = "10s"
[workload]
sessions = 2
calls = [ { tool = "t", count = 2 } ]
[services.a]
rpm = 600
latency = { dist = "constant", value = "100ms" }
[tools.t]
service = "a"
[[strategy]]
name = "s"
max_in_flight = 4
[[strategy]]
name = "u"
`))
	if err != nil {
		t.Fatal(err)
	}
	a := &tuning{name: "s", headroom: 0.7, tuned: paced(*sc.Strategy("s"), 0.7)}
	a.sw.row.Points = []results.SweepPoint{seeded(2, 300, 300, 300), seeded(8, 200, 200, 200)}
	a.sw.row.Chosen = 8
	best := config{strategy: "s", headroom: 0.7, p: seeded(5, 150, 150, 150), what: "s at cap 5, headroom 0.7"}
	got := setBest(sc, []*tuning{a}, best, r)
	if got != a || got.sw.row.Chosen != 5 || len(got.sw.row.Points) != 3 || got.sw.row.Points[1].Cap != 5 {
		t.Errorf("set %s at cap %d over caps %v, want s at cap 5 among 2, 5, 8", got.name, got.sw.row.Chosen, got.sw.row.Points)
	}
	written := config{strategy: "u", headroom: Unpaced, p: seeded(3, 140), what: "u as written"}
	got = setBest(sc, []*tuning{a}, written, r)
	if got == a || got.name != "u" || got.tuned.TokenBucket || got.sw.row.Chosen != 3 || got.chosen() == nil || got.chosen().P95Ms != 140 {
		t.Errorf("set %s (token bucket %v) at cap %d, want u as written, unpaced, at cap 3, p95 140 ms", got.name, got.tuned.TokenBucket, got.sw.row.Chosen)
	}
}
