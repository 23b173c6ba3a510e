package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/scenarios"
)

func TestRunSeeds(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Duration: 20 * time.Second, Strategies: []string{"bounded-64"}, Seeds: 3}
	res, err := RunSeeds(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{42, 43, 44}; len(res.Seeds) != 3 || res.Seeds[0] != want[0] || res.Seeds[2] != want[2] {
		t.Fatalf("seeds %v, want %v", res.Seeds, want)
	}
	runs := res.Strategies[0].SeedRuns
	if len(runs) != 3 {
		t.Fatalf("%d seed runs, want 3", len(runs))
	}
	// Each seed's figures are what a run with that seed alone gives.
	for i, seed := range res.Seeds {
		one, err := Run(context.Background(), sc, Options{Duration: opts.Duration, Strategies: opts.Strategies, Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := runs[i].Calls, one.Strategies[0].Calls; got != want {
			t.Errorf("seed %d: %d calls, want %d", seed, got, want)
		}
		if runs[i].Timeline != nil || runs[i].AnswerCDF != nil {
			t.Errorf("seed %d keeps its plot series", seed)
		}
	}
	if res.Strategies[0].Calls != runs[0].Calls || res.Strategies[0].Timeline == nil {
		t.Error("the strategy's own figures are not the first seed's full ones")
	}
	if runs[0].Calls == runs[1].Calls && runs[1].Calls == runs[2].Calls {
		t.Error("three seeds gave the same call count: the seed is not applied")
	}
}

// A panic in a strategy's goroutine reaches Run's caller, where it can be
// recovered (and the CLI reports it as a bug), instead of killing the process.
func TestRunRaisesAStrategysPanicInTheCaller(t *testing.T) {
	sc, err := scenarios.Builtin("burst-8")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "boom") || !strings.Contains(fmt.Sprint(r), "in a strategy's simulation") {
			t.Errorf("recovered %v, want the strategy's panic", r)
		}
	}()
	_, _ = Run(context.Background(), sc, Options{Duration: 10 * time.Second, Progress: func(string, time.Duration, time.Duration) { panic("boom") }})
	t.Error("Run returned after a strategy panicked")
}
