package scenarios

import (
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/spec"
)

// Event is a timed change of one service's conditions, from an [[events]]
// table: from At (time since the run's start) for For, the fields that are
// set change the service, and at At+For it reverts. Zero fields change
// nothing. Events of one service overlap only when they change different
// aspects (see Aspects), and a stall never overlaps an outage: the rules of
// spec.Config.EventProblems, the one validator of events, which the loader
// runs on each event's Model.
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
// "latency", "error_rate", "overload_rate", "stall", "outage"
// (spec.Event.Aspects).
func (e *Event) Aspects() []string {
	c := e.change()
	return c.Aspects()
}

// MaxEventFactor bounds limit_factor and latency_factor.
const MaxEventFactor = 1000

// decodeEvents reads the [[events]] tables; services and the duration are
// already decoded. It checks what the file spells (types, unknown and
// missing keys, the bounds of the format, the run's length); whether a
// service can run its events is the one validator's call
// (spec.Config.EventProblems on each service's Model and its events'
// Model), whose problems it reports at their keys. An event the file's own
// checks find a problem in is left out of that call until it is fixed.
func (d *decoder) decodeEvents(sc *Scenario, t *table) []Event {
	var events []Event
	type checked struct {
		path string
		e    spec.Event
	}
	byService := map[string][]checked{}
	var order []string // services in the order their first event appears
	for _, et := range t.tables("events") {
		if et == nil {
			continue
		}
		before := len(d.problems)
		e := d.decodeEvent(sc, et)
		events = append(events, e)
		if svc := sc.Service(e.Service); svc != nil && len(d.problems) == before {
			if byService[svc.Name] == nil {
				order = append(order, svc.Name)
			}
			byService[svc.Name] = append(byService[svc.Name], checked{et.path, e.Model(svc)})
		}
	}
	for _, name := range order {
		list := byService[name]
		model := make([]spec.Event, len(list))
		for i, c := range list {
			model[i] = c.e
		}
		for _, p := range sc.Service(name).Model().EventProblems(model) {
			i, rest := eventIndex(p.Key)
			d.add(keyBelow(list[i].path, rest), "%s", p.Msg)
		}
	}
	return events
}

// eventIndex splits a spec.Config.EventProblems key "events[I].REST" into
// I and REST.
func eventIndex(key string) (int, string) {
	idx, rest, _ := strings.Cut(strings.TrimPrefix(key, "events["), "]")
	i, _ := strconv.Atoi(idx)
	return i, strings.TrimPrefix(rest, ".")
}

// Model returns the event in the service vocabulary that fakeapi runs
// events in, on service svc (the event's Service): a limit factor as a
// factor, absolute limits as the whole set of limits the model enforces
// during the event (svc's own, with the event's replacing them, converted
// by Service.Model), the other changes as they are.
func (e *Event) Model(svc *Service) spec.Event {
	me := e.change()
	if e.RequestsPerSecond > 0 || e.RequestsPerMinute > 0 || e.TokensPerMinute > 0 || e.MaxConcurrent > 0 {
		during := *svc
		if e.RequestsPerSecond > 0 {
			during.RequestsPerSecond = e.RequestsPerSecond
		}
		if e.RequestsPerMinute > 0 {
			during.RequestsPerMinute = e.RequestsPerMinute
		}
		if e.TokensPerMinute > 0 {
			during.TokensPerMinute = e.TokensPerMinute
		}
		if e.MaxConcurrent > 0 {
			during.MaxConcurrent = e.MaxConcurrent
		}
		c := during.Model()
		me.Limits.RPS, me.Limits.RPM, me.Limits.TPM, me.Limits.MaxConcurrent = c.RPS, c.RPM, c.TPM, c.MaxConcurrent
		me.Limits.Burst, me.Limits.TokenBurst = c.Burst, c.TokenBurst
	}
	return me
}

// change is the event in the service vocabulary without its absolute
// limits, which depend on the service: Limits holds only the factor.
func (e *Event) change() spec.Event {
	me := spec.Event{At: e.At, For: e.For, LatencyFactor: e.LatencyFactor, Stall: e.Stall, Outage: e.Outage}
	if e.HasErrorRate {
		me.ErrorRate = &e.ErrorRate
	}
	if e.HasOverloadRate {
		me.OverloadRate = &e.OverloadRate
	}
	if e.HasLimits() {
		me.Limits = &spec.EventLimits{Factor: e.LimitFactor}
	}
	return me
}

// decodeEvent reads one event.
func (d *decoder) decodeEvent(sc *Scenario, t *table) (e Event) {
	defer t.finish()
	var svc *Service
	if name, has := t.str("service"); has {
		e.Service = name
		d.checkService(sc, t.key("service"), name)
		svc = sc.Service(name)
	} else if !t.has("service") {
		d.add(t.path, "missing service; set service = %s", d.serviceHint(sc))
	}
	var hasAt, hasFor bool
	e.At, hasAt = t.duration("at")
	e.For, hasFor = t.duration("for")
	switch {
	case !t.has("at") || !t.has("for"):
		d.add(t.path, "needs at and for; write at = \"3m\", for = \"30s\" (from the start of the run, and how long)")
	case !hasAt || !hasFor:
	case sc.Duration > 0 && e.At >= sc.Duration:
		t.add("at", "is %v, not before the end of the run (duration %v); the event would never happen", e.At, sc.Duration)
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
				// The file's own rule: a key that changes nothing.
				t.add(k.name, "is false, which changes nothing; remove it")
			}
			*k.v = b
		}
	}
	if svc != nil && e.LimitFactor > 0 && svc.RequestsPerSecond == 0 && svc.RequestsPerMinute == 0 && svc.TokensPerMinute == 0 && svc.MaxConcurrent == 0 {
		// The file's own rule, as for a false stall: a factor on a service
		// whose limits are all unset (its keys have none of their own)
		// scales nothing.
		t.add("limit_factor", "service %q has no rps, rpm, tpm or max_concurrent to scale; give it limits or set absolute ones here", svc.Name)
	}
	return e
}
