package spec

import (
	"slices"
	"time"

	"github.com/simbench/simbench/sched/satmath"
)

// Event is a timed change of a service's conditions: from At (time since
// the model's epoch, the start of the run) for For, the fields set below
// replace or scale the configured ones, and at At+For everything reverts.
// An event changes one or more aspects (limits, latency, error rate,
// overload rate, stall or outage); two events of one service may overlap
// in time only when they change different aspects, and a stall never
// overlaps an outage. Config.EventProblems is the one validator of a
// service's events.
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
	// during it, is answered after it ends: an admitted request's latency
	// is its drawn service time plus the frozen time it overlaps, and a
	// rejection's answer is held until the stall ends.
	Stall bool
	// Outage refuses every request arriving during the event with an
	// overloaded answer: status 529 for the Anthropic API style, 503
	// otherwise.
	Outage bool
}

// EventLimits are the limits in force during an event. Either Factor is set
// and scales every tenant's own limits, or the absolute values replace them
// for every tenant, as the Config fields of the same names (0: no such
// limit).
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

// IsAbsolute reports whether l sets any absolute limit.
func (l *EventLimits) IsAbsolute() bool {
	return l.RPS != 0 || l.RPM != 0 || l.TPM != 0 || l.MaxConcurrent != 0 || l.Burst != 0 || l.TokenBurst != 0
}

// End is when the event is over, saturating.
func (e *Event) End() time.Duration { return satmath.Add(e.At, e.For) }

// Aspects names what the event changes, in a fixed order: "limits",
// "latency", "error_rate", "overload_rate", "stall", "outage".
func (e *Event) Aspects() []string {
	var a []string
	for _, x := range []struct {
		name string
		on   bool
	}{{"limits", e.Limits != nil}, {"latency", e.LatencyFactor > 0}, {"error_rate", e.ErrorRate != nil},
		{"overload_rate", e.OverloadRate != nil}, {"stall", e.Stall}, {"outage", e.Outage}} {
		if x.on {
			a = append(a, x.name)
		}
	}
	return a
}

// overlaps reports whether a and b cover a common instant.
func (e *Event) overlaps(o *Event) bool { return e.At < o.End() && o.At < e.End() }

// conflict is what two events both change ("" if nothing); a stall and an
// outage conflict too, since one holds what the other refuses.
func conflict(a, b *Event) string {
	bs := b.Aspects()
	for _, x := range a.Aspects() {
		if slices.Contains(bs, x) {
			return x
		}
	}
	if (a.Stall && b.Outage) || (a.Outage && b.Stall) {
		return "stall and outage (a stall holds what an outage refuses)"
	}
	return ""
}
