package sched

import (
	"fmt"
	"time"

	"github.com/simbench/simbench/sched/internal/share"
)

// PriorityClass is one class of calls under Config.Priorities. Classes
// are listed highest first: among the calls waiting for one service's caps
// and buckets, a higher class's are admitted first, except that each class
// is guaranteed Share of the service's admissions while it has calls
// waiting, so that no class starves.
type PriorityClass struct {
	// Name names the class in errors and reports.
	Name string
	// Share is the class's guaranteed minimum fraction of its service's
	// admissions while calls of it wait, in [0, 1]: of every K admissions
	// made while the class is backlogged, at least Share×K − (number of
	// classes) go to it. 0 guarantees nothing (strict priority below the
	// classes above). The shares of all classes sum to at most 1.
	Share float64
}

// validatePriorities reports the first impossible class table.
func validatePriorities(ps []PriorityClass) error {
	sum := 0.0
	for i, p := range ps {
		if !(p.Share >= 0 && p.Share <= 1) {
			return fmt.Errorf("sched: priority class %d (%q): share %v outside [0, 1]", i, p.Name, p.Share)
		}
		sum += p.Share
	}
	// A little slack for shares written as decimals (0.1 + 0.2 + 0.7).
	if sum > 1+1e-9 {
		return fmt.Errorf("sched: priority classes' shares sum to %v, more than 1", sum)
	}
	return nil
}

// classQueues holds one service's waiting calls by priority class, and what
// each class is owed under its guaranteed share (share.Shares).
type classQueues struct {
	q    []callQueue
	owed *share.Shares
	// wake is the time a prioritized service's next call fits its buckets,
	// when a timer is set for it (0: none).
	wake time.Duration
}

func newClassQueues(ps []PriorityClass) *classQueues {
	shares := make([]float64, len(ps))
	for i, p := range ps {
		shares[i] = p.Share
	}
	return &classQueues{q: make([]callQueue, len(ps)), owed: share.New(shares)}
}

// queueOf returns the queue a call of the service waits in.
func (s *serviceState) queueOf(cs *callState) *callQueue {
	if s.prio == nil {
		return &s.callQueue
	}
	return &s.prio.q[cs.call.Priority]
}

// queues returns every queue of the service.
func (s *serviceState) queues() []callQueue {
	if s.prio == nil {
		return []callQueue{s.callQueue}
	}
	return s.prio.q
}

// peekClass chooses the class whose call the service admits next and
// returns that call, or nil when no call waits.
func (c *Core) peekClass(s *serviceState) *callState {
	x := s.prio
	next := x.owed.Pick(func(i int) bool { return c.peekQueue(&x.q[i]) != nil })
	if next < 0 {
		return nil
	}
	return c.peekQueue(&x.q[next])
}

// popClass admits the call peekClass returned and settles what each
// class is owed.
func (c *Core) popClass(s *serviceState) {
	x := s.prio
	next := x.owed.Admitted(func(i int) bool { return c.peekQueue(&x.q[i]) != nil })
	c.popQueue(&x.q[next])
}

// fitsNow reports whether a prioritized service's next call h fits its
// buckets now. A service with priority classes admits a call only when it
// can start at once: a reservation made for later would fix the order of
// the calls that wait for the buckets, and a call of a higher class that
// came meanwhile would start after them. When h does not fit, a timer is
// set for the time it will.
func (c *Core) fitsNow(s *serviceState, h *callState) bool {
	if s.req == nil && s.tok == nil {
		return true
	}
	at := c.earliest(h)
	if at <= c.now {
		return true
	}
	if s.prio.wake != at {
		s.prio.wake = at
		c.setTimer(timer{at: at, kind: timerClass, svc: s})
	}
	return false
}

// classes returns the number of priority classes (1 without classes).
func (c *Core) classes() int { return max(1, len(c.cfg.Priorities)) }

// knownClass reports whether Priority p names a class of the Config's (any
// call has class 0 without classes).
func (c *Core) knownClass(p int) bool { return p >= 0 && p < c.classes() }

// validPriorities reports whether every call's Priority names a class.
func (c *Core) validPriorities(calls []Call) bool {
	for i := range calls {
		if !c.knownClass(calls[i].Priority) {
			return false
		}
	}
	return true
}

// priorityProblems lists the calls whose Priority names no class.
func (c *Core) priorityProblems(calls []Call) []string {
	n := c.classes()
	var out []string
	for i := range calls {
		if p := calls[i].Priority; !c.knownClass(p) {
			out = append(out, fmt.Sprintf("call %q has priority %d, but Config.Priorities has %d classes (0 to %d)", calls[i].ID, p, len(c.cfg.Priorities), n-1))
		}
	}
	return out
}
