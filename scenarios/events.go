package scenarios

import (
	"strings"
	"time"

	"github.com/simbench/simbench/spec"
)

// Event is a timed change of one service's conditions, from an [[events]]
// table: from At (time since the run's start) for For, the fields that are
// set change the service, and at At+For it reverts. Zero fields change
// nothing. Events of one service overlap only when they change different
// aspects (see Aspects), and a stall never overlaps an outage.
type Event struct {
	// Service names the service the event changes (a key of [services]).
	Service string
	// At is when the event starts, from the start of the run; For how long
	// it lasts (> 0). The event ends within the run's Duration.
	At, For time.Duration
	// LimitFactor, when > 0, multiplies every limit of the service (rps,
	// rpm, tpm, max_concurrent and the bucket sizes).
	LimitFactor float64
	// RequestsPerSecond, RequestsPerMinute, TokensPerMinute and
	// MaxConcurrent, when > 0, are absolute limits in force during the
	// event, in the units of the service keys of the same names; limits
	// left at 0 keep the service's value. Never set with LimitFactor.
	RequestsPerSecond, RequestsPerMinute, TokensPerMinute float64
	MaxConcurrent                                         int
	// LatencyFactor, when > 0, multiplies the latency of requests admitted
	// during the event.
	LatencyFactor float64
	// ErrorRate, when HasErrorRate, replaces the service's error_rate
	// during the event (a fraction).
	ErrorRate    float64
	HasErrorRate bool
	// OverloadRate, when HasOverloadRate, is the fraction of requests
	// answered 529 overloaded during the event.
	OverloadRate    float64
	HasOverloadRate bool
	// Stall freezes the service: nothing is answered during the event, and
	// requests in service or arriving are answered after it ends.
	Stall bool
	// Outage refuses every request during the event: 529 for a service with
	// headers = "anthropic", 503 otherwise.
	Outage bool
}

// End is when the event is over, from the start of the run.
func (e *Event) End() time.Duration { return e.At + e.For }

// HasLimits reports whether the event changes limits, by a factor or to
// absolute values.
func (e *Event) HasLimits() bool {
	return e.LimitFactor > 0 || e.RequestsPerSecond > 0 || e.RequestsPerMinute > 0 ||
		e.TokensPerMinute > 0 || e.MaxConcurrent > 0
}

// Aspects names what the event changes, in a fixed order: "limits",
// "latency", "error_rate", "overload_rate", "stall", "outage".
func (e *Event) Aspects() []string {
	var a []string
	for _, x := range []struct {
		name string
		on   bool
	}{{"limits", e.HasLimits()}, {"latency", e.LatencyFactor > 0}, {"error_rate", e.HasErrorRate},
		{"overload_rate", e.HasOverloadRate}, {"stall", e.Stall}, {"outage", e.Outage}} {
		if x.on {
			a = append(a, x.name)
		}
	}
	return a
}

// MaxEventFactor bounds limit_factor and latency_factor.
const MaxEventFactor = 1000

// decodeEvents reads the [[events]] tables; services and the duration are
// already decoded.
func (d *decoder) decodeEvents(sc *Scenario, t *table) []Event {
	var events []Event
	var keys []string // each event's key path, for overlap problems
	for _, et := range t.tables("events") {
		if et == nil {
			continue
		}
		e, ok := d.decodeEvent(sc, et)
		if !ok {
			continue
		}
		for i, o := range events {
			if o.Service != e.Service || !(e.At < o.End() && o.At < e.End()) {
				continue
			}
			if what := eventConflict(&e, &o); what != "" {
				d.add(et.path, "overlaps the event at line %d on service %q, which also changes %s; one service can have one change of each kind at a time, so move one of them or merge them into one event",
					d.pos.lookup(keys[i]).line, e.Service, what)
			}
		}
		events = append(events, e)
		keys = append(keys, et.path)
	}
	return events
}

// eventConflict is what two events both change ("" if nothing).
func eventConflict(a, b *Event) string {
	bs := b.Aspects()
	for _, x := range a.Aspects() {
		for _, y := range bs {
			if x == y {
				return x
			}
		}
	}
	if (a.Stall && b.Outage) || (a.Outage && b.Stall) {
		return "stall and outage (a stall holds what an outage refuses)"
	}
	return ""
}

// decodeEvent reads one event; ok is false when it is too broken to check
// against the others.
func (d *decoder) decodeEvent(sc *Scenario, t *table) (e Event, ok bool) {
	defer t.finish()
	ok = true
	var svc *Service
	if name, has := t.str("service"); has {
		e.Service = name
		d.checkService(sc, t.key("service"), name)
		svc = sc.Service(name)
	} else if !t.has("service") {
		d.add(t.path, "missing service; set service = %s", d.serviceHint(sc))
	}
	ok = svc != nil
	var hasAt, hasFor bool
	e.At, hasAt = t.duration("at")
	e.For, hasFor = t.duration("for")
	switch {
	case !t.has("at") || !t.has("for"):
		d.add(t.path, "needs at and for; write at = \"3m\", for = \"30s\" (from the start of the run, and how long)")
		ok = false
	case !hasAt || !hasFor:
		ok = false
	case e.For == 0:
		t.add("for", "is 0; set how long the event lasts, like for = \"30s\"")
		ok = false
	case sc.Duration > 0 && e.At >= sc.Duration:
		t.add("at", "is %v, not before the end of the run (duration %v); the event would never happen", e.At, sc.Duration)
		ok = false
	case sc.Duration > 0 && e.End() > sc.Duration:
		t.add("for", "makes the event end at %v, after the end of the run (duration %v); shorten it to at most %v", e.End(), sc.Duration, sc.Duration-e.At)
	}

	if f, has := t.positive("limit_factor", MaxEventFactor, "a factor"); has {
		e.LimitFactor = f
	}
	e.RequestsPerSecond, _ = t.rate("rps", time.Second, MaxRequestsPerSecond, whyRPS)
	e.RequestsPerMinute, _ = t.rate("rpm", time.Minute, MaxRequestsPerMinute, whyCredit)
	e.TokensPerMinute, _ = t.rate("tpm", time.Minute, MaxTokensPerMinute, whyCredit)
	if n, has := t.integer("max_concurrent", 1, MaxCap, whyCap); has {
		e.MaxConcurrent = int(n)
	}
	if f, has := t.positive("latency_factor", MaxEventFactor, "a factor"); has {
		e.LatencyFactor = f
	}
	e.ErrorRate, e.HasErrorRate = t.fraction("error_rate")
	e.OverloadRate, e.HasOverloadRate = t.fraction("overload_rate")
	for _, k := range []struct {
		name string
		v    *bool
	}{{"stall", &e.Stall}, {"outage", &e.Outage}} {
		if b, has := t.boolean(k.name); has {
			if !b {
				t.add(k.name, "is false, which changes nothing; remove it")
			}
			*k.v = b
		}
	}

	if e.Stall && e.Outage {
		t.add("outage", "is set with stall = true in the same event; a stall holds what an outage refuses, so make them two events at different times")
	}
	absolute := []string{}
	for _, k := range []string{"rps", "rpm", "tpm", "max_concurrent"} {
		if t.has(k) {
			absolute = append(absolute, k)
		}
	}
	if t.has("limit_factor") && len(absolute) > 0 {
		t.add("limit_factor", "scales every limit, so it cannot be set with %s; use either the factor or absolute limits", strings.Join(absolute, ", "))
	}
	if len(e.Aspects()) == 0 && len(absolute) == 0 && !t.has("limit_factor") && !t.has("latency_factor") &&
		!t.has("error_rate") && !t.has("overload_rate") && !t.has("stall") && !t.has("outage") {
		d.add(t.path, "changes nothing; set limit_factor, rps, rpm, tpm, max_concurrent, latency_factor, error_rate, overload_rate, stall = true or outage = true")
	}
	if svc != nil {
		d.checkEventOnService(t, &e, svc)
	}
	return e, ok
}

// checkEventOnService checks what an event does against its service.
func (d *decoder) checkEventOnService(t *table, e *Event, svc *Service) {
	if f := e.LimitFactor; f > 0 {
		if svc.RequestsPerSecond == 0 && svc.RequestsPerMinute == 0 && svc.TokensPerMinute == 0 && svc.MaxConcurrent == 0 {
			t.add("limit_factor", "service %q has no rps, rpm, tpm or max_concurrent to scale; give it limits or set absolute ones here", svc.Name)
		}
		for _, x := range []struct {
			name   string
			v, max float64
		}{{"rps", svc.RequestsPerSecond, MaxRequestsPerSecond}, {"rpm", svc.RequestsPerMinute, MaxRequestsPerMinute},
			{"tpm", svc.TokensPerMinute, MaxTokensPerMinute}, {"burst", svc.Burst, MaxRequestsPerMinute},
			{"max_concurrent", float64(svc.MaxConcurrent), MaxCap}} {
			if x.v*f > x.max {
				t.add("limit_factor", "is %s; it makes the service's %s %s, above the most allowed (%s)", spec.ShowAmount(f), x.name, spec.ShowAmount(x.v*f), spec.ShowAmount(x.max))
			}
		}
	}
	if e.HasErrorRate {
		if sum := e.ErrorRate + svc.Faults.HangRate + svc.Faults.ResetRate; sum > 1 {
			t.add("error_rate", "with the service's hang_rate and reset_rate makes %s; keep the sum at most 1", spec.ShowAmount(sum))
		}
	}
}
