package sched

import "time"

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
	timerCool                     // a deployment's cooldown has ended
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
// never depend on anything but the inputs. It is a binary heap kept by push
// and pop (container/heap's algorithm), typed so that a timer is neither
// boxed in an interface, an allocation each, nor compared through one.
type timerHeap []timer

func (h timerHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}

// push adds t.
func (h *timerHeap) push(t timer) {
	*h = append(*h, t)
	x := *h
	for j := len(x) - 1; j > 0; {
		i := (j - 1) / 2 // parent
		if !x.less(j, i) {
			break
		}
		x[i], x[j] = x[j], x[i]
		j = i
	}
}

// pop removes and returns the earliest timer; the heap must not be empty.
func (h *timerHeap) pop() timer {
	x := *h
	n := len(x) - 1
	x[0], x[n] = x[n], x[0]
	for i := 0; ; {
		j := 2*i + 1 // left child
		if j >= n {
			break
		}
		if r := j + 1; r < n && x.less(r, j) {
			j = r
		}
		if !x.less(j, i) {
			break
		}
		x[i], x[j] = x[j], x[i]
		i = j
	}
	t := x[n]
	x[n] = timer{}
	*h = x[:n]
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
	c.timers.push(t)
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
	case timerCool:
		return t.svc.coolUntil != t.at
	case timerClass:
		return t.svc.prio.wake != t.at
	case timerCredit:
		cr := &t.svc.credit[t.credit]
		return cr.ticket == 0 || cr.until != t.at
	}
	return true
}

// nextTimer drops stale timers from the top of the heap and returns the
// earliest live one. Every public method asks twice: the test of an empty
// heap is inlined, sparing a run without timeouts 50 instructions a
// one-call turn.
func (c *Core) nextTimer() (time.Duration, bool) {
	if len(c.timers) == 0 {
		return 0, false
	}
	return c.liveTimer()
}

// liveTimer is nextTimer for a heap that is not empty.
func (c *Core) liveTimer() (time.Duration, bool) {
	for len(c.timers) > 0 {
		if c.timers[0].stale() {
			t := c.timers.pop()
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
