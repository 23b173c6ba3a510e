package sim

import (
	"container/heap"
	"math"
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

// BenchmarkEventHeap is the engine's heap in its steady state, the hold
// model: 3,000 events pending (about BenchmarkEngine's), each pop followed
// by a push at a lognormal time ahead; against container/heap's binary
// heap of the same events in the same run (ns/op of bare-binary).
func BenchmarkEventHeap(b *testing.B) {
	const pending = 3000
	ahead := func(rng *rand.Rand) time.Duration {
		return time.Duration(math.Exp(rng.NormFloat64()*0.6) * float64(300*time.Millisecond))
	}
	b.Run("4-ary", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 1))
		var h eventHeap
		var seq uint64
		for range pending {
			seq++
			h.push(event{at: ahead(rng), seq: seq})
		}
		b.ResetTimer()
		for range b.N {
			e := h.pop()
			seq++
			h.push(event{at: e.at + ahead(rng), seq: seq})
		}
	})
	b.Run("bare-binary", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 1))
		h := &refHeap{}
		var seq uint64
		for range pending {
			seq++
			heap.Push(h, event{at: ahead(rng), seq: seq})
		}
		b.ResetTimer()
		for range b.N {
			e := heap.Pop(h).(event)
			seq++
			heap.Push(h, event{at: e.at + ahead(rng), seq: seq})
		}
	})
}

// refHeap is a container/heap of events, the reference for eventHeap.
type refHeap []event

func (h refHeap) Len() int           { return len(h) }
func (h refHeap) Less(i, j int) bool { return before(&h[i], &h[j]) }
func (h refHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *refHeap) Push(x any)        { *h = append(*h, x.(event)) }
func (h *refHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
