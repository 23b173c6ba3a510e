package sched

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/simbench/simbench/sched/internal/workers"
)

// TestRunnerKeepsPeakWorkersIdle runs an uncapped turn whose calls all wait
// until every one of them has started, so that its workers all run at once:
// the caller of Run runs one, workers the others. Once the turn is over, the
// workers wait idle, as many as ran at once but at most workers.MaxIdleWorkers; two
// windows of the trim timer without work let them go, down to workers.MinIdle.
func TestRunnerKeepsPeakWorkersIdle(t *testing.T) {
	for _, n := range []int{200, workers.MaxIdleWorkers + 50} {
		t.Run(fmt.Sprint(n, "-calls"), func(t *testing.T) {
			var entered sync.WaitGroup
			entered.Add(n)
			exec := func(_ context.Context, call *Call, _ int) Outcome {
				entered.Done()
				entered.Wait()
				return Succeeded(call.ID)
			}
			r, err := NewRunner(Config{}, exec)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			turn := Turn{Calls: make([]Call, n)}
			for i := range turn.Calls {
				turn.Calls[i].ID = fmt.Sprint("c", i)
			}
			if _, err := r.Run(context.Background(), turn); err != nil {
				t.Fatal(err)
			}
			// Each worker goes idle (or returns) a moment after its
			// attempt's outcome is in.
			idle := func() (idle, running int) {
				r.mu.Lock()
				defer r.mu.Unlock()
				return r.workers.Idle()
			}
			for _, running := idle(); running > 0; _, running = idle() {
				runtime.Gosched()
			}
			want := min(n-1, workers.MaxIdleWorkers)
			if got, _ := idle(); got != want {
				t.Errorf("%d workers idle after a turn that ran %d at once, want %d", got, n-1, want)
			}
			r.workers.Trim() // the window that saw the turn: its peak stays
			if got, _ := idle(); got != want {
				t.Errorf("%d workers idle after the turn's window, want %d", got, want)
			}
			r.workers.Trim() // a window without work
			if got, _ := idle(); got != workers.MinIdle {
				t.Errorf("%d workers idle after a window without work, want %d", got, workers.MinIdle)
			}
		})
	}
}
