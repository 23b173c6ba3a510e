package sim

import (
	"context"
	"testing"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/spec"
)

// TestSharedHeadersSyncAvoids429s runs the shared-headers built-in in
// virtual time: a key shared with an unseen batch job. The strategy whose
// bucket follows the remaining headers gets under half the 429s of the same
// strategy without header sync, and fails no more calls. Without the
// quota reaching the virtual outcome (or the core ignoring it) the two
// strategies would run identically.
func TestSharedHeadersSyncAvoids429s(t *testing.T) {
	sc, err := scenarios.Builtin("shared-headers")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]*results.StrategyResult{}
	for i := range res.Strategies {
		s := &res.Strategies[i]
		by[s.Name] = s
		t.Logf("%-7s %d calls, %d attempts, %d 429s, %d failed, goodput %.2f/s", s.Name, s.Calls, s.Attempts, s.RateLimited, s.Failed, s.GoodputPerS)
	}
	static, synced := by["static"], by["synced"]
	if static == nil || synced == nil {
		t.Fatalf("strategies %v", res.Strategies)
	}
	if static.RateLimited < 100 {
		t.Fatalf("static: only %d 429s; the scenario no longer shows the shared key", static.RateLimited)
	}
	if 2*synced.RateLimited >= static.RateLimited {
		t.Errorf("synced: %d 429s, not under half of static's %d", synced.RateLimited, static.RateLimited)
	}
	if synced.Failed > static.Failed {
		t.Errorf("synced failed %d calls, static %d", synced.Failed, static.Failed)
	}
	if synced.GoodputPerS < 0.95*static.GoodputPerS {
		t.Errorf("synced goodput %.2f/s below 95%% of static's %.2f/s", synced.GoodputPerS, static.GoodputPerS)
	}
}

// TestSchedConfigBudgetAndSync checks a strategy's retry budget reaches every
// service as its own copy, and header sync only with token buckets.
func TestSchedConfigBudgetAndSync(t *testing.T) {
	sc := &scenarios.Scenario{Services: []scenarios.Service{{Name: "a", RequestsPerMinute: 60}, {Name: "b"}}}
	st := &scenarios.Strategy{Name: "x", TokenBucket: true, HeaderSync: true, RetryBudget: &scenarios.RetryBudget{Ratio: 0.2, MinPerSecond: 3, Max: 7}}
	cfg, err := setup.SchedConfig(sc, st)
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg.Services["a"], cfg.Services["b"]
	if a.RetryBudget == nil || b.RetryBudget == nil || a.RetryBudget == b.RetryBudget {
		t.Fatalf("every service wants its own retry budget: %p %p", a.RetryBudget, b.RetryBudget)
	}
	if *a.RetryBudget != (sched.RetryBudget{Ratio: 0.2, MinPerSecond: 3, Max: 7}) || !a.HeaderSync || !b.HeaderSync {
		t.Fatalf("mapped %+v, sync %v %v", *a.RetryBudget, a.HeaderSync, b.HeaderSync)
	}
	st.TokenBucket, st.RetryBudget = false, nil
	cfg, _ = setup.SchedConfig(sc, st)
	if cfg.Services["a"].HeaderSync || cfg.Services["a"].RetryBudget != nil {
		t.Fatal("header sync without token buckets, or a budget nobody asked for")
	}
	if m := setup.ModelConfig(&scenarios.Service{Name: "s", Background: spec.Background{Rate: 6, Tokens: 9, Burst: 30}}); m.Background.Rate != 6 || m.Background.Tokens != 9 || m.Background.Burst != 30 {
		t.Fatalf("background %+v", m.Background)
	}
}
