package fakeapi

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// limitSet is one tenant's shared limits (sharedRates): per kind its limit
// and capacity (limit 0: none), and the concurrency cap.
type limitSet struct {
	limit, capacity units
	conc            int
}

// scale multiplies every limit of s by f, rounding up, at least 1.
func (s limitSet) scale(f float64) limitSet {
	up := func(v int64) int64 {
		if v == 0 {
			return 0
		}
		return max(1, satmath.FromFloat[int64](math.Ceil(float64(v)*f)))
	}
	var out limitSet
	for r := range numRates {
		out.limit[r], out.capacity[r] = up(s.limit[r]), up(s.capacity[r])
	}
	if s.conc > 0 {
		out.conc = int(max(1, math.Ceil(float64(s.conc)*f)))
	}
	return out
}

// absoluteLimits is the limit set an event's absolute limits give, by the
// rules of spec.Config: Burst sizes the rps bucket (the rpm one without
// rps), TokenBurst the tpm bucket; 0 is one window's worth.
func absoluteLimits(l *spec.EventLimits) limitSet {
	s := limitSet{conc: l.MaxConcurrent}
	s.limit[rateRPS], s.limit[rateRPM], s.limit[rateTPM] = l.RPS, l.RPM, l.TPM
	s.capacity = s.limit
	if l.Burst > 0 {
		if l.RPS > 0 {
			s.capacity[rateRPS] = l.Burst
		} else {
			s.capacity[rateRPM] = l.Burst
		}
	}
	if l.TokenBurst > 0 {
		s.capacity[rateTPM] = l.TokenBurst
	}
	return s
}

// limitsOf is the limit set tenant t enforces now.
func limitsOf(t *tenant) limitSet {
	s := limitSet{conc: t.maxConc}
	for k := t.has & sharedRates; k != 0; k &= k - 1 {
		r := k.first()
		s.limit[r], s.capacity[r] = t.lim[r].limit, t.lim[r].capacity
	}
	return s
}

// setLimit changes the limiter's limit and capacity at its last advance
// (the caller advances it to the instant of the change first), keeping its
// state: a token bucket's level is clamped to the new capacity.
func (l *limiter) setLimit(limit, capacity int64) {
	l.limit, l.capacity = limit, capacity
	if l.alg != spec.TokenBucket {
		l.capacity = limit
		return
	}
	if full := whole(l.capacity); full.less(l.credit) {
		l.credit = full
	} else if floor := whole(-l.capacity); l.credit.less(floor) {
		l.credit = floor
	}
}

// apply sets tenant t's shared limits to s at now. A limit s does not set
// is no longer enforced; a limiter enforced before keeps its state.
func (t *tenant) apply(alg spec.Algorithm, now time.Duration, s limitSet) {
	for k := sharedRates; k != 0; k &= k - 1 {
		r := k.first()
		l := &t.lim[r]
		switch {
		case s.limit[r] == 0:
			t.has &^= r.bit()
			continue
		case l.window == 0: // never enforced before: a fresh limiter
			*l = newLimiter(alg, s.limit[r], rates[r].window, s.capacity[r])
			l.last = now
		default:
			l.advance(now)
			l.setLimit(s.limit[r], s.capacity[r])
		}
		t.has |= r.bit()
	}
	t.maxConc = s.conc
}

// boundary is an instant at which the limits change: the start of a limit
// event (ev ≥ 0) or its end (ev < 0, back to the configured limits).
type boundary struct {
	at time.Duration
	ev int
}

// timeline holds a model's events in the forms its decisions need.
type timeline struct {
	events []spec.Event
	// bounds are the limit changes in time order (an end before a start at
	// the same instant); next is the first not yet applied.
	bounds []boundary
	next   int
	// stalls are the stall intervals in time order.
	stalls []spec.Event
}

func newTimeline(events []spec.Event) timeline {
	tl := timeline{events: events}
	for i := range events {
		e := &events[i]
		if e.Limits != nil {
			tl.bounds = append(tl.bounds, boundary{e.At, i}, boundary{e.End(), -1})
		}
		if e.Stall {
			tl.stalls = append(tl.stalls, *e)
		}
	}
	// Ends (ev < 0) sort before starts at the same instant.
	slices.SortStableFunc(tl.bounds, func(a, b boundary) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(min(a.ev, 0), min(b.ev, 0)))
	})
	slices.SortFunc(tl.stalls, func(a, b spec.Event) int { return cmp.Compare(a.At, b.At) })
	return tl
}

// active returns the event changing aspect-bearing field sel that covers
// now, or nil. Events of one service changing one aspect never overlap, so
// at most one matches.
func (tl *timeline) active(now time.Duration, sel func(*spec.Event) bool) *spec.Event {
	if len(tl.events) == 0 {
		return nil // the common case, inlined into the hot path
	}
	return tl.find(now, sel)
}

// find is active for a service with events.
func (tl *timeline) find(now time.Duration, sel func(*spec.Event) bool) *spec.Event {
	for i := range tl.events {
		e := &tl.events[i]
		if e.At <= now && now < e.End() && sel(e) {
			return e
		}
	}
	return nil
}

// applyLimits brings every tenant's limits up to now: each limit change at
// or before now is applied at its own instant, in order, so a bucket
// refills at the old rate until the change and at the new one after it.
func (m *Model) applyLimits(now time.Duration) {
	tl := &m.events
	for tl.next < len(tl.bounds) && tl.bounds[tl.next].at <= now {
		b := tl.bounds[tl.next]
		tl.next++
		m.eachTenant(func(t *tenant) {
			s := t.base
			if b.ev >= 0 {
				if l := tl.events[b.ev].Limits; l.Factor > 0 {
					s = t.base.scale(l.Factor)
				} else if t.level == LevelNone || t.level == LevelOrganization {
					// Absolute limits are the service's: under nested
					// limits, the organisation's; its keys and projects
					// keep their own.
					s = absoluteLimits(l)
				}
			}
			t.apply(m.cfg.Algorithm, b.at, s)
		})
	}
}

// eachTenant calls f with every tenant, in key order, then with the
// levels above keys (the projects, then the organisation).
func (m *Model) eachTenant(f func(*tenant)) {
	if m.tenants == nil {
		f(&m.single)
		return
	}
	for _, k := range m.cfg.Keys {
		f(m.tenants[k.Key])
	}
	for _, l := range m.levels {
		f(l)
	}
}

// finishAt is when work of length lat starting at now completes, when no
// work progresses during a stall: lat plus the frozen time it overlaps.
// Work that would complete at the instant a stall starts, or a request of
// no work arriving during one, completes when the stall ends.
func (tl *timeline) finishAt(now, lat time.Duration) time.Duration {
	t, left := now, lat
	for i := range tl.stalls {
		s := &tl.stalls[i]
		end := s.End()
		if end <= t {
			continue
		}
		if s.At > t {
			if left < s.At-t {
				break
			}
			left -= s.At - t
		}
		t = end
	}
	return satmath.Add(t, left)
}

// stalledUntil is when the stall covering now ends, or now when none does.
func (tl *timeline) stalledUntil(now time.Duration) time.Duration {
	for i := range tl.stalls {
		if s := &tl.stalls[i]; s.At <= now && now < s.End() {
			return s.End()
		}
	}
	return now
}
