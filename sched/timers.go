package sched

import (
	"container/heap"
	"time"
)

type timerKind uint8

const (
	timerRelease timerKind = iota // an admitted call's bucket reservation is repaid
	timerBackoff                  // a retry's backoff has elapsed
	timerAttempt                  // an attempt's timeout has elapsed
	timerCall                     // a call's deadline has passed
	timerTurn                     // a turn's deadline has passed
	timerPause                    // a service's pause has ended
	timerCredit                   // a service's credit grant has expired
	timerClass                    // a prioritized service's next call fits its buckets
	timerHedge                    // an attempt's hedge is due
)

// timer is one pending wake-up. Timers are never removed early: a timer whose
// gen no longer matches its call's is stale and ignored when it fires.
type timer struct {
	at     time.Duration
	seq    uint64
	kind   timerKind
	credit CreditKind // timerCredit: which grant
	gen    uint32
	cs     *callState
	turn   *turnState
	svc    *serviceState
}

// timerHeap orders timers by time, then by the order they were set, so ties
// never depend on anything but the inputs.
type timerHeap []timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = timer{}
	*h = old[:len(old)-1]
	return t
}

func (c *Core) setTimer(t timer) {
	if t.cs != nil {
		t.cs.turn.refs++
	} else if t.turn != nil {
		t.turn.refs++
	}
	c.timerSeq++
	t.seq = c.timerSeq
	heap.Push(&c.timers, t)
}

// stale reports whether a timer no longer applies.
func (t *timer) stale() bool {
	switch t.kind {
	case timerRelease, timerBackoff, timerAttempt, timerHedge:
		return t.cs.done || t.cs.gen != t.gen
	case timerCall:
		return t.cs.done
	case timerTurn:
		return t.turn.done
	case timerPause:
		return t.svc.pausedUntil != t.at
	case timerClass:
		return t.svc.prio.wake != t.at
	case timerCredit:
		cr := &t.svc.credit[t.credit]
		return cr.ticket == 0 || cr.until != t.at
	}
	return true
}

// nextTimer drops stale timers from the top of the heap and returns the
// earliest live one.
func (c *Core) nextTimer() (time.Duration, bool) {
	for len(c.timers) > 0 {
		if c.timers[0].stale() {
			t := heap.Pop(&c.timers).(timer)
			c.unrefTimer(&t)
			continue
		}
		return c.timers[0].at, true
	}
	return 0, false
}

// unrefTimer drops the reference a timer held to its turn.
func (c *Core) unrefTimer(t *timer) {
	if t.cs != nil {
		c.unref(t.cs.turn)
	} else if t.turn != nil {
		c.unref(t.turn)
	}
}
