package sched

import (
	"runtime"
	"testing"
	"time"
	"unsafe"
)

// steady drives a core whose queue never drains: each step submits a
// one-call turn and completes the oldest attempt in flight, so about
// backlog calls stay queued behind a cap of 4 throughout.
type steady struct {
	c       *Core
	now     time.Duration
	turn    []Call
	running []AttemptID
	acts    []Action
	recycle bool // give every TurnResult back (Core.Recycle)
}

func newSteady(t testing.TB, backlog int) *steady {
	c, err := New(Config{MaxInFlight: 4, Services: map[string]ServiceConfig{"llm": {MaxInFlight: 4, RequestsPerMinute: 6e9, RequestBurst: 1e6, TokensPerMinute: 6e12}}})
	if err != nil {
		t.Fatal(err)
	}
	s := &steady{c: c, turn: []Call{{ID: "a", Service: "llm", Tokens: 100}}}
	for range backlog {
		s.submit(t)
	}
	return s
}

func (s *steady) submit(t testing.TB) {
	if _, err := s.c.Submit(s.now, Turn{Calls: s.turn}); err != nil {
		t.Fatal(err)
	}
	s.collect()
}

func (s *steady) collect() {
	s.acts = s.c.Actions(s.acts[:0])
	for _, a := range s.acts {
		switch {
		case a.Kind == ActStart:
			s.running = append(s.running, a.Attempt)
		case a.Kind == ActTurnDone && s.recycle:
			s.c.Recycle(a.Turn)
		}
	}
}

// step submits one call and completes the oldest attempt in flight.
func (s *steady) step(t testing.TB) {
	s.now += time.Microsecond
	s.submit(t)
	a := s.running[0]
	// Shift rather than reslice, so that appending never reallocates.
	n := copy(s.running, s.running[1:])
	s.running = s.running[:n]
	s.c.Complete(s.now, a, Outcome{HasUsage: true, Tokens: 80})
	s.collect()
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A queue that never drains keeps memory in proportion to what is queued
// now, not to what it ever held.
func TestQueueMemoryFollowsWhatIsQueued(t *testing.T) {
	const calls = 1_000_000
	s := newSteady(t, 1000)
	for range 10_000 { // reach steady state: slices at their working size
		s.step(t)
	}
	before := heapInUse()
	for range calls {
		s.step(t)
	}
	after := heapInUse()
	if w := s.c.Waiting(); w < 900 {
		t.Fatalf("%d calls waiting: the queue drained, so this tests nothing", w)
	}
	if grew := int64(after) - int64(before); grew >= 1<<20 {
		t.Errorf("heap grew %d bytes over %d calls through a never-draining queue, want < 1 MB", grew, calls)
	}
}

// The Core's allocations per call in steady state, a one-call turn at a
// time: only what becomes the driver's, its TurnResult and result, cut
// from chunks of several turns' worth (outChunks); turn and call states
// are reused, and no decision allocates. (AllocsPerRun rounds down to
// whole allocations, so the heap's counts over many calls are read.)
func TestAllocationsPerCall(t *testing.T) {
	s := newSteady(t, 100)
	for range 1000 {
		s.step(t)
	}
	const calls = 16 * 1024
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range calls {
		s.step(t)
	}
	runtime.ReadMemStats(&after)
	allocs := float64(after.Mallocs-before.Mallocs) / calls
	t.Logf("%.3f allocations per call", allocs)
	if allocs > 0.125 {
		t.Errorf("%.3f allocations per call in steady state, want ≤ 0.125 (a chunk of the drivers' results every %d turns)", allocs, oneChunk)
	}
}

// A turn state fills a size class of whole cache lines (turnState's
// padding), so that its first fields sit in the same lines in every turn:
// a field added or removed must come out of the padding, or the padding go.
func TestTurnStateIsWholeCacheLines(t *testing.T) {
	if n := unsafe.Sizeof(turnState{}); n != 448 {
		t.Errorf("a turn state is %d bytes, want 448: resize its padding", n)
	}
}
