//go:build long

package live

import (
	"context"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/simtest"
)

// TestLongProgressiveJoinLive runs the join scenario live: the Runner's
// Stream hands each result to the agent loop as it is decided, so the
// turn moves on at its second answer and the slow call is cancelled
// (drop) and not billed, as in virtual time. It depends on real timing
// (the slow call answering last), so it runs with the long checks.
func TestLongProgressiveJoinLive(t *testing.T) {
	sc := simtest.JoinScenario(t, `{ first = 2, late = "drop" }`)
	sc.Duration = time.Minute
	res, err := RunLive(context.Background(), sc, LiveOptions{TimeScale: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Strategies[0]
	if s.Turns != 3 || s.FailedTurns != 0 || s.Failed != 3 {
		t.Fatalf("%d turns, %d failed, %d failed calls; want 3 answered, the 3 slow calls cancelled", s.Turns, s.FailedTurns, s.Failed)
	}
	tk := s.Tasks
	if tk == nil || tk.Completed != 1 || tk.Services[3].InputTokens != 0 {
		t.Fatalf("tasks %+v; want 1 completed, nothing billed by the slow service", tk)
	}
	if p50 := s.TurnLatencyMs.P50; p50 >= 2000 {
		t.Errorf("turn p50 %v ms; a turn that waited for its slow call takes 2,100 ms", p50)
	}
}
