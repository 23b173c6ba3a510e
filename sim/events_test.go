package sim

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The heap gives events back by time, ties by the order they were
// scheduled, whatever the mix of pushes and pops.
func TestEventHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h eventHeap
	var seq uint64
	var last event
	popped := 0
	for range 20000 {
		if len(h) == 0 || rng.IntN(3) > 0 {
			seq++
			// Few distinct times, so that ties are common; never before the
			// last event popped, as in the engine.
			h.push(event{at: last.at + time.Duration(rng.IntN(8)), seq: seq})
			continue
		}
		e := h.pop()
		if popped > 0 && before(&e, &last) {
			t.Fatalf("popped (%v, %d) after (%v, %d)", e.at, e.seq, last.at, last.seq)
		}
		last = e
		popped++
	}
	for len(h) > 0 {
		e := h.pop()
		if before(&e, &last) {
			t.Fatalf("popped (%v, %d) after (%v, %d)", e.at, e.seq, last.at, last.seq)
		}
		last = e
	}
}
