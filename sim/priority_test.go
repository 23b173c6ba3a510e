package sim

import (
	"context"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// TestPriorityScenario is the check on the built-in priority
// scenario, on virtual time over five seeds: with priority classes the
// interactive class's p95 time to answer is at most half of the same run
// without them, while the batch class gets at least its guaranteed share
// of the successful calls.
func TestPriorityScenario(t *testing.T) {
	sc, err := scenarios.Builtin("priority")
	if err != nil {
		t.Fatal(err)
	}
	share := sc.Strategy("priority").Priority[1].Share
	for seed := uint64(1); seed <= 5; seed++ {
		s := *sc
		s.Seed = seed
		res, err := Run(context.Background(), &s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		fifo, prio := classOf(t, res, "fifo", "interactive"), classOf(t, res, "priority", "interactive")
		batch := classOf(t, res, "priority", "batch")
		t.Logf("seed %d: interactive p95 %v ms with priority, %v ms without; batch share %v", seed, prio.AnswerLatencyMs.P95, fifo.AnswerLatencyMs.P95, batch.CallShare)
		if prio.Turns == 0 || fifo.Turns == 0 {
			t.Fatalf("seed %d: no interactive turns finished (%d with priority, %d without)", seed, prio.Turns, fifo.Turns)
		}
		if float64(prio.AnswerLatencyMs.P95) > 0.5*float64(fifo.AnswerLatencyMs.P95) {
			t.Errorf("seed %d: interactive p95 time to answer %v ms with priority, above half of %v ms without", seed, prio.AnswerLatencyMs.P95, fifo.AnswerLatencyMs.P95)
		}
		if batch.CallShare < share {
			t.Errorf("seed %d: the batch class got %v of the successful calls, below its guaranteed %v", seed, batch.CallShare, share)
		}
	}
}

// classOf returns the named class's figures under the named strategy.
func classOf(t *testing.T, r *results.Results, strategy, class string) results.ClassResult {
	t.Helper()
	for _, s := range r.Strategies {
		if s.Name != strategy {
			continue
		}
		for _, c := range s.Classes {
			if c.Name == class {
				return c
			}
		}
	}
	t.Fatalf("no class %q under strategy %q", class, strategy)
	return results.ClassResult{}
}
