package fakeapi

import (
	"slices"
	"time"

	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// Early-retry accounting and the retry delay a rejected client is told.

// earlyRetry reports whether r comes back before a retry delay its client
// was given had elapsed (see Decision.EarlyRetry), and counts it.
func (m *Model) earlyRetry(now time.Duration, r *Request) bool {
	switch {
	case r.Retry == RetryMarked:
		return m.matchRetry(now, r.Client)
	case r.Retry == RetryUnknown && len(m.retryAt) > 0:
		return m.beforeDeadline(now, r.Client)
	}
	return false
}

// beforeDeadline reports whether now is before the latest retry deadline
// of a client that sends one request at a time, and counts it; a deadline
// that has passed is forgotten.
func (m *Model) beforeDeadline(now time.Duration, client string) bool {
	at, ok := m.retryAt[client]
	if !ok {
		return false
	}
	if now < at {
		m.c.early++
		return true
	}
	delete(m.retryAt, client)
	return false
}

// remember records the retry delay a rate-limited request from client was
// told at now, for the early-retry accounting of the request that repeats
// it: per request for a client that marks its retries, else as the
// client's latest deadline.
func (m *Model) remember(now time.Duration, r *Request, retryAfter time.Duration) {
	at := satmath.Add(now, retryAfter)
	if r.Retry != RetryUnknown {
		m.addPending(now, r.Client, at)
		return
	}
	if at > m.retryAt[r.Client] {
		m.retryAt[r.Client] = at
		if len(m.retryAt) >= m.pruneAt {
			m.pruneRetries(now)
		}
	}
}

// advertise turns a true wait into the delay the client is told.
func (m *Model) advertise(w time.Duration) (time.Duration, bool) {
	if m.cfg.Lie == spec.LieMissing || m.cfg.Headers == spec.HeadersNone {
		return 0, false
	}
	unit := time.Second
	if m.cfg.Headers == spec.HeadersOpenAI {
		unit = time.Millisecond
	}
	if m.cfg.Lie == spec.LieShort {
		w = time.Duration(float64(w) * m.cfg.LieFactor)
		return w - w%unit, true // a liar rounds down
	}
	return RoundUp(w, unit), true
}

// RoundUp rounds d up to a multiple of unit, as providers round retry
// delays, saturating at the largest Duration.
func RoundUp(d, unit time.Duration) time.Duration {
	if r := d % unit; r != 0 {
		d = satmath.Add(d, unit-r)
	}
	return d
}

// minPrune is the least size of the retry-deadline map worth pruning.
const minPrune = 1024

// pruneRetries drops the retry deadlines that have passed: a client
// arriving after its deadline is not early, so forgetting it changes no
// count. The next prune waits until the map has doubled, so the work stays
// proportional to the deadlines added.
func (m *Model) pruneRetries(now time.Duration) {
	for c, at := range m.retryAt {
		if at <= now {
			delete(m.retryAt, c)
		}
	}
	m.pruneAt = max(minPrune, 2*len(m.retryAt))
}

// maxPending bounds the deadlines kept per client; pendingHorizon is how
// long past its deadline one is kept for a retry to match.
const (
	maxPending     = 4096
	pendingHorizon = 10 * time.Minute
)

// matchRetry matches a marked retry from client at now to the earliest
// pending deadline of that client, consumes it, and reports whether the
// retry was early: every pending deadline was still ahead. Deadlines more
// than pendingHorizon past are dropped first: a client that retries that
// late answers none of them. A retry with no
// pending deadline (it follows a 5xx, or a 429 without a delay) is not early.
func (m *Model) matchRetry(now time.Duration, client string) bool {
	ds := slices.DeleteFunc(m.pending[client], func(d time.Duration) bool { return d < now-pendingHorizon })
	if len(ds) == 0 {
		delete(m.pending, client)
		return false
	}
	i := 0
	for j, d := range ds {
		if d < ds[i] {
			i = j
		}
	}
	early := now < ds[i]
	if early {
		m.c.early++
	}
	ds[i] = ds[len(ds)-1]
	if ds = ds[:len(ds)-1]; len(ds) == 0 {
		delete(m.pending, client)
	} else {
		m.pending[client] = ds
	}
	return early
}

// addPending records the retry deadline at of a rate-limited request from
// client, dropping deadlines long past (and the oldest past maxPending), so
// clients that never retry do not grow the map without bound.
func (m *Model) addPending(now time.Duration, client string, at time.Duration) {
	ds := m.pending[client]
	if len(ds) >= maxPending {
		ds = slices.DeleteFunc(ds, func(d time.Duration) bool { return d < now-pendingHorizon })
		if len(ds) >= maxPending {
			ds = ds[1:]
		}
	}
	m.pending[client] = append(ds, at)
	if len(m.pending) >= m.pendingPruneAt {
		for c, ds := range m.pending {
			if ds = slices.DeleteFunc(ds, func(d time.Duration) bool { return d < now-pendingHorizon }); len(ds) == 0 {
				delete(m.pending, c)
			} else {
				m.pending[c] = ds
			}
		}
		m.pendingPruneAt = max(minPrune, 2*len(m.pending))
	}
}
