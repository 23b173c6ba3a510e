//go:build long

package sim

import (
	"context"
	"testing"
	"time"
)

// The engine's memory grows with the work in flight, not with the work
// done: tier3 at 500 agents holds as much live heap in its 40th minute as
// in its 10th (the peak of the live heap over each window's last five
// minutes, read from runtime/metrics as the collector leaves it), though
// four times the calls have passed. Anything kept per call or per turn
// until the end of the run (records, a timeline of fixed-width buckets,
// trace buffers, per-session slices or maps that only grow) adds some
// 500 kB per byte kept per call between the two windows and fails it. It
// reads the process's heap, so it runs alone (not in parallel) and behind
// the long tag.
func TestLongEngineMemoryIsInFlight(t *testing.T) {
	sc := tier3At(t, 500)
	sc.Duration = 40 * time.Minute
	e, err := NewEngine(sc, &sc.Strategies[0])
	if err != nil {
		t.Fatal(err)
	}
	var early, late uint64 // live-heap peaks over 5–10 min and 35–40 min
	e.Run(context.Background(), func(v time.Duration) {
		live, _ := heapNow()
		switch {
		case v >= 5*time.Minute && v < 10*time.Minute:
			early = max(early, live)
		case v >= 35*time.Minute:
			late = max(late, live)
		}
	})
	if e.m.Calls < 2_000_000 {
		t.Fatalf("only %d calls", e.m.Calls)
	}
	if early == 0 || late == 0 {
		t.Fatalf("no live-heap sample in a window: early %d, late %d", early, late)
	}
	t.Logf("%d calls; live heap peaks at %.1f MB in minutes 5–10, %.1f MB in minutes 35–40", e.m.Calls, float64(early)/(1<<20), float64(late)/(1<<20))
	if late > early+early/5+1<<20 {
		t.Errorf("live heap grew with the run: %.1f MB in minutes 5–10, %.1f MB in minutes 35–40", float64(early)/(1<<20), float64(late)/(1<<20))
	}
}
