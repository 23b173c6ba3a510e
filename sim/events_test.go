package sim

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// The heap gives events back by time, ties by the order they were
// scheduled, whatever the mix of pushes and pops.
func TestEventHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h EventHeap
	var seq uint64
	var last Event
	popped := 0
	for range 20000 {
		if len(h) == 0 || rng.IntN(3) > 0 {
			seq++
			// Few distinct times, so that ties are common; never before the
			// last event popped, as in the engine.
			h.Push(Event{At: last.At + time.Duration(rng.IntN(8)), Seq: seq})
			continue
		}
		e := h.Pop()
		if popped > 0 && before(&e, &last) {
			t.Fatalf("popped (%v, %d) after (%v, %d)", e.At, e.Seq, last.At, last.Seq)
		}
		last = e
		popped++
	}
	for len(h) > 0 {
		e := h.Pop()
		if before(&e, &last) {
			t.Fatalf("popped (%v, %d) after (%v, %d)", e.At, e.Seq, last.At, last.Seq)
		}
		last = e
	}
}

// TestEventHeapMatchesReference is a property test: for random mixes of
// pushes and pops (runs of each, so the heap grows and shrinks through
// every shape of its last level, and few distinct times in two trials of
// three, so that ties on time are common; times up to hours in the third),
// every pop gives the event container/heap's binary heap gives, ordered by
// time, then by scheduling order: from the heap alone, and from the
// engine's queue, the heap behind its front slot.
func TestEventHeapMatchesReference(t *testing.T) {
	t.Run("heap", func(t *testing.T) { checkEventOrder(t, func() pendingEvents { return new(heapEvents) }) })
	t.Run("queue", func(t *testing.T) { checkEventOrder(t, func() pendingEvents { return new(eventQueue) }) })
}

// pendingEvents is what checkEventOrder checks: eventQueue, or eventHeap
// through heapEvents.
type pendingEvents interface {
	push(Event)
	pop() Event
	len() int
}

// heapEvents is an eventHeap as pendingEvents.
type heapEvents struct{ h EventHeap }

func (q *heapEvents) push(e Event) { q.h.Push(e) }
func (q *heapEvents) pop() Event   { return q.h.Pop() }
func (q *heapEvents) len() int     { return len(q.h) }

// checkEventOrder is TestEventHeapMatchesReference on the pending events
// that fresh makes.
func checkEventOrder(t *testing.T, fresh func() pendingEvents) {
	for trial := range 300 {
		rng := rand.New(rand.NewPCG(uint64(trial), 7))
		h := fresh()
		ref := &refHeap{}
		var seq uint64
		var now time.Duration
		spread := 1 + rng.IntN(50)
		if trial%3 == 1 {
			spread = 1 << rng.IntN(43) // up to about two hours
		}
		for step := range 400 {
			if n := rng.IntN(40); rng.IntN(2) == 0 || h.len() == 0 {
				for range n {
					seq++
					e := Event{At: now + time.Duration(rng.IntN(spread)), Seq: seq, Ref: int32(seq), Kind: evKind(seq % 8)}
					h.push(e)
					heap.Push(ref, e)
				}
				continue
			}
			for range min(rng.IntN(40), h.len()) {
				got, want := h.pop(), heap.Pop(ref).(Event)
				if got != want {
					t.Fatalf("trial %d step %d: popped %+v, want %+v", trial, step, got, want)
				}
				now = got.At
			}
			if h.len() != ref.Len() {
				t.Fatalf("trial %d step %d: %d events left, want %d", trial, step, h.len(), ref.Len())
			}
		}
		for h.len() > 0 {
			if got, want := h.pop(), heap.Pop(ref).(Event); got != want {
				t.Fatalf("trial %d draining: popped %+v, want %+v", trial, got, want)
			}
		}
		if ref.Len() != 0 {
			t.Fatalf("trial %d: empty with %d events left in the reference", trial, ref.Len())
		}
	}
}

// BenchmarkEventHeap is the engine's event heap in its steady
// state, the hold model: 30 events pending (about M/M/20's) or 3,000
// (about BenchmarkEngine's scenario), each pop followed by a push at a
// lognormal time ahead; the engine's 4-ary heap and container/heap's
// binary heap of the same events in the same run.
func BenchmarkEventHeap(b *testing.B) {
	for _, pending := range []int{30, 3000} {
		b.Run(fmt.Sprint(pending), func(b *testing.B) { benchEventOrders(b, pending) })
	}
}

// benchEventOrders is BenchmarkEventHeap with pending events.
func benchEventOrders(b *testing.B, pending int) {
	// The times ahead are drawn before the timer starts, so that the
	// structures' own costs are what differs.
	var aheads [1 << 12]time.Duration
	draw := rand.New(rand.NewPCG(1, 1))
	for i := range aheads {
		aheads[i] = time.Duration(math.Exp(draw.NormFloat64()*0.6) * float64(300*time.Millisecond))
	}
	ahead := func(rng *int) time.Duration {
		*rng++
		return aheads[*rng%len(aheads)]
	}
	b.Run("4-ary", func(b *testing.B) {
		var rng int
		var h EventHeap
		var seq uint64
		for range pending {
			seq++
			h.Push(Event{At: ahead(&rng), Seq: seq})
		}
		b.ResetTimer()
		for range b.N {
			e := h.Pop()
			seq++
			h.Push(Event{At: e.At + ahead(&rng), Seq: seq})
		}
	})
	b.Run("bare-binary", func(b *testing.B) {
		var rng int
		h := &refHeap{}
		var seq uint64
		for range pending {
			seq++
			heap.Push(h, Event{At: ahead(&rng), Seq: seq})
		}
		b.ResetTimer()
		for range b.N {
			e := heap.Pop(h).(Event)
			seq++
			heap.Push(h, Event{At: e.At + ahead(&rng), Seq: seq})
		}
	})
}

// refHeap is a container/heap of events, the reference for eventHeap,
// with the order written out on its own: by time, then by seq.
type refHeap []Event

func (h refHeap) Len() int { return len(h) }
func (h refHeap) Less(i, j int) bool {
	return h[i].At < h[j].At || h[i].At == h[j].At && h[i].Seq < h[j].Seq
}
func (h refHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *refHeap) Push(x any)   { *h = append(*h, x.(Event)) }
func (h *refHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
