package sim

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/spec"
)

// TestAdaptiveAIMDOnTier3 adds an AIMD strategy to tier3 — no token bucket
// and no fixed cap, only an adaptive limit starting at 32 — and runs it with the built-in
// unbounded and bounded-64 strategies: AIMD keeps 429s to a small share of
// its attempts, far below unbounded's, while its goodput comes near that of
// bounded-64, which was tuned by hand to the published limits.
func TestAdaptiveAIMDOnTier3(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	aimd := *sc.Strategy("bounded-64")
	aimd.Name, aimd.MaxInFlight, aimd.TokenBucket, aimd.Headroom, aimd.Recommend = "aimd", 0, false, 1, false
	aimd.Adaptive = &scenarios.Adaptive{Algorithm: sched.AlgorithmAIMD, Initial: 32, Min: 1, Max: 256}
	sc.Strategies = append(sc.Strategies, aimd)
	res, err := Run(context.Background(), sc, Options{Strategies: []string{"unbounded", "bounded-64", "aimd"}, Duration: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]*results.StrategyResult{}
	for i := range res.Strategies {
		s := &res.Strategies[i]
		by[s.Name] = s
		t.Logf("%-10s goodput %.1f/s, %d attempts, %d 429s (%.2f%%), %d failed", s.Name, s.GoodputPerS, s.Attempts, s.RateLimited, 100*float64(s.RateLimited)/float64(max(s.Attempts, 1)), s.Failed)
	}
	share := func(s *results.StrategyResult) float64 { return float64(s.RateLimited) / float64(max(s.Attempts, 1)) }
	a, b, u := by["aimd"], by["bounded-64"], by["unbounded"]
	if share(a) > 0.05 {
		t.Errorf("aimd: 429s are %.1f%% of attempts, want under 5%%", 100*share(a))
	}
	if share(a) > share(u)/5 {
		t.Errorf("aimd: 429 share %.1f%% is not far below unbounded's %.1f%%", 100*share(a), 100*share(u))
	}
	if a.GoodputPerS < 0.9*b.GoodputPerS {
		t.Errorf("aimd goodput %.1f/s below 90%% of bounded-64's %.1f/s", a.GoodputPerS, b.GoodputPerS)
	}
}

// TestSchedConfigAdaptive checks a strategy's adaptive table reaches sched for
// the services it names, each with its own copy, and no other.
func TestSchedConfigAdaptive(t *testing.T) {
	sc := &scenarios.Scenario{Services: []scenarios.Service{{Name: "a"}, {Name: "b"}}}
	st := &scenarios.Strategy{Name: "x", Adaptive: &scenarios.Adaptive{Algorithm: sched.AlgorithmGradient, Initial: 3, Max: 9, Decrease: 0.6, LongWindow: 50}}
	cfg, err := setup.SchedConfig(sc, st)
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg.Services["a"].Adaptive, cfg.Services["b"].Adaptive
	if a == nil || b == nil || a == b {
		t.Fatalf("every service wants its own adaptive config: %p %p", a, b)
	}
	if a.Algorithm != sched.AlgorithmGradient || a.Initial != 3 || a.Max != 9 || a.Backoff != 0.6 || a.LongWindow != 50 {
		t.Fatalf("mapped %+v", *a)
	}
	st.Adaptive.Services = []string{"b"}
	cfg, _ = setup.SchedConfig(sc, st)
	if cfg.Services["a"].Adaptive != nil || cfg.Services["b"].Adaptive == nil {
		t.Fatal("services = [\"b\"] should give only b an adaptive limit")
	}
}

// A served service counts posts to its write tools' paths as writes, and
// only those, taking the resource key where each tool says.
func TestServeConfigListsWritePaths(t *testing.T) {
	sc, err := scenarios.Builtin("mixed-read-write")
	if err != nil {
		t.Fatal(err)
	}
	var writes, routes []fakeapi.WriteRoute
	for i, tl := range sc.Tools {
		if tl.Kind == scenarios.KindWrite {
			sc.Tools[i].ResourceFrom = spec.ResourceFrom{Kind: spec.ResourcePath, Segment: i + 1}
			writes = append(writes, fakeapi.WriteRoute{Path: "/tools/" + tl.Name, ResourceFrom: sc.Tools[i].ResourceFrom})
		}
	}
	for i := range sc.Services {
		cfg := setup.ServeConfig(sc, &sc.Services[i])
		routes = append(routes, cfg.WriteRoutes...)
		if cfg.WritePaths != nil {
			t.Errorf("write paths %v besides the routes", cfg.WritePaths)
		}
		if got := setup.ModelConfig(&sc.Services[i]).WriteRoutes; got != nil {
			t.Errorf("the pure model's config lists write routes %v", got)
		}
	}
	byPath := func(a, b fakeapi.WriteRoute) int { return strings.Compare(a.Path, b.Path) }
	slices.SortFunc(writes, byPath)
	slices.SortFunc(routes, byPath)
	if len(writes) == 0 || !slices.Equal(routes, writes) {
		t.Errorf("write routes %v, want the write tools' %v", routes, writes)
	}
}
