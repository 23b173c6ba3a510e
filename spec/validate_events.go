package spec

import (
	"fmt"
	"math"
	"time"
)

// EventProblems returns every problem with events as the timed changes of
// service c, in event order; none means fakeapi's model and server accept
// them on c. Keys are "events[I]" (I indexing events) followed by the key a
// scenario's [[events]] table spells: at, for, limit_factor, rps, rpm,
// tpm, max_concurrent, burst, token_burst, latency_factor, error_rate,
// overload_rate, outage. c's own problems are Problems'.
func (c Config) EventProblems(events []Event) []Problem {
	ps := &problems{}
	for i := range events {
		e := &events[i]
		ps.under(fmt.Sprintf("events[%d]", i), c.eventProblems(e))
		for j := range i {
			o := &events[j]
			if what := conflict(e, o); what != "" && e.overlaps(o) {
				ps.add(fmt.Sprintf("events[%d]", i), "overlaps the event from %v to %v, which also changes %s; one service can have one change of each kind at a time, so move one of them or merge them into one event",
					o.At, o.End(), what)
			}
		}
	}
	return ps.list
}

// eventProblems checks one event against service c.
func (c Config) eventProblems(e *Event) []Problem {
	ps := &problems{}
	if e.At < 0 {
		ps.add("at", "is %v; it must not be negative", e.At)
	}
	switch {
	case e.For == 0:
		ps.add("for", "is 0; set how long the event lasts, like for = \"30s\"")
	case e.For < 0:
		ps.add("for", "is %v; it must be above 0", e.For)
	}
	if len(e.Aspects()) == 0 {
		ps.add("", "changes nothing; set limit_factor, rps, rpm, tpm, max_concurrent, latency_factor, error_rate, overload_rate, stall = true or outage = true")
	}
	if e.Stall && e.Outage {
		ps.add("outage", "is set with stall = true in the same event; a stall holds what an outage refuses, so make them two events at different times")
	}
	if !(e.LatencyFactor >= 0 && e.LatencyFactor <= math.MaxFloat64) {
		ps.add("latency_factor", "is %v; it must be above 0 (0 leaves the latency as it is)", e.LatencyFactor)
	}
	for _, r := range []struct {
		key string
		v   *float64
	}{{"error_rate", e.ErrorRate}, {"overload_rate", e.OverloadRate}} {
		if r.v != nil && !(*r.v >= 0 && *r.v <= 1) {
			ps.add(r.key, "is %v; it must be a fraction in [0, 1]", *r.v)
		}
	}
	if e.ErrorRate != nil && *e.ErrorRate <= 1 {
		if sum := *e.ErrorRate + c.Faults.HangRate + c.Faults.ResetRate; sum > 1 {
			ps.add("error_rate", "with the service's hang_rate and reset_rate makes %s; keep the sum at most 1", ShowAmount(sum))
		}
	}
	if e.Limits != nil {
		c.eventLimitProblems(ps, e.Limits)
	}
	return ps.list
}

// eventLimitProblems checks the limits an event sets on service c.
func (c Config) eventLimitProblems(ps *problems, l *EventLimits) {
	f := l.Factor
	switch {
	case !(f >= 0 && f <= math.MaxFloat64):
		ps.add("limit_factor", "is %v; it must be above 0", f)
	case f > 0 && l.IsAbsolute():
		ps.add("limit_factor", "scales every limit, so it cannot be set with absolute limits (rps, rpm, tpm, max_concurrent); use either the factor or absolute limits")
	case f > 0:
		c.scaledLimitProblems(ps, f)
	case !l.IsAbsolute():
		ps.add("", "changes the limits but sets none; give limit_factor or absolute limits")
	default:
		// The absolute limits pass the service's own rules on limits.
		probe := Config{RPS: l.RPS, RPM: l.RPM, TPM: l.TPM, MaxConcurrent: l.MaxConcurrent,
			Burst: l.Burst, TokenBurst: l.TokenBurst, Algorithm: c.Algorithm}
		probe.limitProblems(ps)
		if l.MaxConcurrent < 0 {
			ps.add("max_concurrent", "is %d; it must not be negative", l.MaxConcurrent)
		}
	}
}

// scaledLimitProblems checks that factor f keeps every limit of c and of
// its keys within the limiter's arithmetic, and every concurrency cap
// within an int on every platform.
func (c Config) scaledLimitProblems(ps *problems, f float64) {
	for _, x := range []struct {
		name string
		v    int64
		win  time.Duration
	}{{"rps", max(c.RPS, c.Burst), time.Second}, {"rpm", max(c.RPM, c.Burst), time.Minute}, {"tpm", max(c.TPM, c.TokenBurst), time.Minute}} {
		if hi := limitBound(x.win); float64(x.v)*f > float64(hi) {
			ps.add("limit_factor", "is %s; it makes the service's %s %s, above the most it can count (%d)", ShowAmount(f), x.name, ShowAmount(float64(x.v)*f), hi)
		}
	}
	concOK := func(n int) bool { return float64(n)*f <= float64(max(n, math.MaxInt32)) }
	if !concOK(c.MaxConcurrent) {
		ps.add("limit_factor", "is %s; it makes the service's max_concurrent %s, above the most allowed (%d)", ShowAmount(f), ShowAmount(float64(c.MaxConcurrent)*f), math.MaxInt32)
	}
	for _, k := range c.Keys {
		if max(float64(k.RPS)*60, float64(k.RPM), float64(k.TPM))*f > MaxLimit || !concOK(k.MaxConcurrent) {
			ps.add("limit_factor", "is %s; it makes key %q's limits too large", ShowAmount(f), k.Key)
		}
	}
}
