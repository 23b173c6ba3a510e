package sim

import "time"

type evKind uint8

const (
	evWake     evKind = iota // the scheduler asked to be woken
	evArrival                // open model: the next turn arrives
	evSession                // closed model: a session starts its next turn
	evResponse               // an attempt's response reaches the client
	evArrive                 // an attempt reaches its service, after its network delay out
	evServed                 // a service finishes an admitted attempt; the answer leaves
	evCancel                 // a user or a parent cancels a turn
)

// event is one entry of the engine's heap. Ties in time break on seq, the
// order in which events were scheduled, never on anything else. Events hold
// no pointers — ref indexes the engine's attempt slab (evArrive, evServed, evResponse), its
// pending cancels (evCancel) or a session (evSession) — so moving them
// costs no write barriers and the garbage collector never scans the heap.
type event struct {
	at   time.Duration
	seq  uint64 // evWake: also names the wake request it answers
	ref  int32
	kind evKind
}

// eventHeap is a 4-ary min-heap of events by (at, seq), written out rather
// than through container/heap so that pushing a value does not allocate.
// Four children per node halve the heap's depth against a binary heap; a
// pop compares more siblings per level, but they sit in one or two cache
// lines, so it costs less where the engine spends its time.
type eventHeap []event

func (h eventHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 4
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s[n] = event{}
	s = s[:n]
	for i := 0; ; {
		m := i
		first := 4*i + 1
		for c := first; c < first+4 && c < n; c++ {
			if s.less(c, m) {
				m = c
			}
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
