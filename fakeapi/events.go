package fakeapi

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// Event is a timed change of a service's conditions: from At (time since
// the model's epoch, the start of the run) for For, the fields set below
// replace or scale the configured ones, and at At+For everything reverts.
// An event changes one or more aspects (limits, latency, error rate,
// overload rate, stall or outage); two events of one service may overlap
// in time only when they change different aspects, and a stall never
// overlaps an outage.
type Event struct {
	// At is when the event starts, since the epoch; For how long it lasts
	// (> 0). The event covers [At, At+For).
	At, For time.Duration
	// Limits, when set, changes the rate and concurrency limits.
	Limits *EventLimits
	// LatencyFactor, when > 0, multiplies the latency drawn for every
	// request admitted during the event.
	LatencyFactor float64
	// ErrorRate, when set, replaces Faults.ErrorRate for requests admitted
	// during the event (a fraction in [0, 1]).
	ErrorRate *float64
	// OverloadRate, when set, is the fraction of arrivals during the event
	// answered 529 overloaded (in [0, 1]), as in an overload episode.
	OverloadRate *float64
	// Stall freezes the service: no work progresses and nothing is answered
	// during the event. A request in service when it starts, or arriving
	// during it, is answered after it ends: an admitted request's Latency
	// is its drawn service time plus the frozen time it overlaps, and a
	// rejection's answer is held until the stall ends (Decision.Latency).
	Stall bool
	// Outage refuses every request arriving during the event with an
	// overloaded answer: status 529 for the Anthropic API style, 503
	// otherwise.
	Outage bool
}

// EventLimits are the limits in force during an event. Either Factor is set
// and scales every tenant's own limits, or the absolute values replace them
// for every tenant, as the ServiceConfig fields of the same names (0: no
// such limit).
//
// Across a change, each limiter keeps its state: a token bucket keeps its
// level, clamped to the new capacity, and refills at the new rate from the
// instant of the change; a fixed window keeps the units counted in the
// current window and a sliding window its log, judged against the new limit.
// A limit that an event adds starts with a full bucket (empty window).
// Requests in flight keep their concurrency slots when MaxConcurrent drops.
type EventLimits struct {
	// Factor, when > 0, multiplies RPS, RPM, TPM, MaxConcurrent and the
	// bucket capacities, each rounded up to a whole number, at least 1.
	Factor float64
	// RPS, RPM and TPM are requests per second, requests per minute and
	// tokens per minute; MaxConcurrent caps requests in flight; Burst and
	// TokenBurst are the bucket capacities (0: one window's worth).
	RPS, RPM, TPM     int64
	MaxConcurrent     int
	Burst, TokenBurst int64
}

// End is when the event is over, saturating.
func (e *Event) End() time.Duration { return satmath.Add(e.At, e.For) }

// Aspects names what the event changes, in a fixed order: "limits",
// "latency", "error_rate", "overload_rate", "stall", "outage".
func (e *Event) Aspects() []string {
	var a []string
	if e.Limits != nil {
		a = append(a, "limits")
	}
	if e.LatencyFactor > 0 {
		a = append(a, "latency")
	}
	if e.ErrorRate != nil {
		a = append(a, "error_rate")
	}
	if e.OverloadRate != nil {
		a = append(a, "overload_rate")
	}
	if e.Stall {
		a = append(a, "stall")
	}
	if e.Outage {
		a = append(a, "outage")
	}
	return a
}

// conflicts reports the aspect two events both change ("" if none); a stall
// and an outage conflict too, since one holds what the other refuses.
func conflicts(a, b *Event) string {
	as, bs := a.Aspects(), b.Aspects()
	for _, x := range as {
		if slices.Contains(bs, x) {
			return x
		}
	}
	if (a.Stall && b.Outage) || (a.Outage && b.Stall) {
		return "stall and outage"
	}
	return ""
}

// validateEvents reports every problem with a service's events.
func (c ServiceConfig) validateEvents() []error {
	var errs []error
	bad := func(i int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("fakeapi: service %q: events[%d]: "+format, append([]any{c.Name, i}, args...)...))
	}
	for i := range c.Events {
		e := &c.Events[i]
		if e.At < 0 {
			bad(i, "at is negative (%v)", e.At)
		}
		if e.For <= 0 {
			bad(i, "for must be above 0 (%v)", e.For)
		}
		if len(e.Aspects()) == 0 {
			bad(i, "changes nothing")
		}
		if e.Stall && e.Outage {
			bad(i, "is both a stall and an outage; a stall holds what an outage refuses")
		}
		if e.LatencyFactor < 0 || math.IsNaN(e.LatencyFactor) || math.IsInf(e.LatencyFactor, 0) {
			bad(i, "latency factor %v must be above 0", e.LatencyFactor)
		}
		for _, r := range []struct {
			name string
			v    *float64
		}{{"error_rate", e.ErrorRate}, {"overload_rate", e.OverloadRate}} {
			if r.v != nil && !(*r.v >= 0 && *r.v <= 1) {
				bad(i, "%s %v is outside [0, 1]", r.name, *r.v)
			}
		}
		if e.ErrorRate != nil && *e.ErrorRate <= 1 && *e.ErrorRate+c.Faults.HangRate+c.Faults.ResetRate > 1 {
			bad(i, "error_rate + the service's hang_rate + reset_rate is above 1")
		}
		if l := e.Limits; l != nil {
			errs = append(errs, c.validateEventLimits(i, l)...)
		}
		for j := range i {
			o := &c.Events[j]
			if e.At < o.End() && o.At < e.End() {
				if what := conflicts(e, o); what != "" {
					bad(i, "overlaps events[%d], which also changes %s", j, what)
				}
			}
		}
	}
	return errs
}

func (c ServiceConfig) validateEventLimits(i int, l *EventLimits) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("fakeapi: service %q: events[%d]: limits: "+format, append([]any{c.Name, i}, args...)...))
	}
	abs := l.RPS != 0 || l.RPM != 0 || l.TPM != 0 || l.MaxConcurrent != 0 || l.Burst != 0 || l.TokenBurst != 0
	switch {
	case l.Factor < 0 || math.IsNaN(l.Factor) || math.IsInf(l.Factor, 0):
		bad("factor %v must be above 0", l.Factor)
	case l.Factor > 0 && abs:
		bad("set a factor or absolute limits, not both")
	case l.Factor > 0:
		// Every scaled limit must stay within the limiter's arithmetic.
		for _, x := range []struct {
			name string
			v    int64
			win  time.Duration
		}{{"rps", max(c.RPS, c.Burst), time.Second}, {"rpm", max(c.RPM, c.Burst), time.Minute}, {"tpm", max(c.TPM, c.TokenBurst), time.Minute}} {
			if float64(x.v)*l.Factor > float64(spec.MaxCredit/int64(x.win)) {
				bad("factor %v makes %s too large", l.Factor, x.name)
			}
		}
		for _, k := range c.Keys {
			if float64(max(k.RPS, k.RPM, k.TPM))*l.Factor > float64(spec.MaxCredit/int64(time.Minute)) {
				bad("factor %v makes key %q's limits too large", l.Factor, k.Key)
			}
		}
	case !abs:
		bad("sets no limit; give a factor or absolute limits")
	default:
		// The absolute limits must pass the same checks as the service's.
		probe := ServiceConfig{Config: spec.Config{Name: c.Name, RPS: l.RPS, RPM: l.RPM, TPM: l.TPM, MaxConcurrent: l.MaxConcurrent,
			Burst: l.Burst, TokenBurst: l.TokenBurst, Algorithm: c.Algorithm}}
		if err := probe.Validate(); err != nil {
			bad("%v", err)
		}
	}
	return errs
}

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
// rules of ServiceConfig: Burst sizes the rps bucket (the rpm one without
// rps), TokenBurst the tpm bucket; 0 is one window's worth.
func absoluteLimits(l *EventLimits) limitSet {
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
	full := l.capacity * int64(l.window)
	l.credit = min(l.credit, full)
	l.credit = max(l.credit, -full)
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
	events []Event
	// bounds are the limit changes in time order (an end before a start at
	// the same instant); next is the first not yet applied.
	bounds []boundary
	next   int
	// stalls are the stall intervals in time order.
	stalls []Event
}

func newTimeline(events []Event) timeline {
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
	slices.SortFunc(tl.stalls, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	return tl
}

// active returns the event changing aspect-bearing field sel that covers
// now, or nil. Events of one service changing one aspect never overlap, so
// at most one matches.
func (tl *timeline) active(now time.Duration, sel func(*Event) bool) *Event {
	if len(tl.events) == 0 {
		return nil // the common case, inlined into the hot path
	}
	return tl.find(now, sel)
}

// find is active for a service with events.
func (tl *timeline) find(now time.Duration, sel func(*Event) bool) *Event {
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
				} else {
					s = absoluteLimits(l)
				}
			}
			t.apply(m.cfg.Algorithm, b.at, s)
		})
	}
}

// eachTenant calls f with every tenant, in key order.
func (m *Model) eachTenant(f func(*tenant)) {
	if m.tenants == nil {
		f(&m.single)
		return
	}
	for _, k := range m.cfg.Keys {
		f(m.tenants[k.Key])
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
