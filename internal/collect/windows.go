package collect

import (
	"math"
	"slices"
	"time"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// WindowSettle is how long after an event's start its window opens: the
// time a strategy is given to react before its figures count, so that a
// window shows how the strategy runs under the new conditions rather than
// the first moments of the change.
const WindowSettle = 10 * time.Second

// EventWindow is the stretch of a run over which one event's figures are
// taken, with what the event changed.
type EventWindow struct {
	// Label says in a few words what the event changes ("limits ×0.5",
	// setup.EventLabel); Service is the name of the service it hits.
	Label, Service string
	// Start and End bound the window, from the start of the run.
	Start, End time.Duration
	// LimitPerS is the request limit in force on Service over the window,
	// in requests per second (0: none).
	LimitPerS float64
}

// EventWindows returns one window per event span of the scenario
// (EventSpans, in start order). A window runs from WindowSettle after the
// event's start (a third of the way in, for an event shorter than three
// times that) to the event's end, or to the start of the next event to
// start after it, on any service, when that comes first: so a limit cut
// followed by an outage gives one window for the cut alone and one for the
// outage.
func EventWindows(sc *scenarios.Scenario) []EventWindow {
	spans := setup.EventSpans(sc)
	var out []EventWindow
	for i, sp := range spans {
		start, end := durationOf(sp.StartS), durationOf(sp.EndS)
		for _, next := range spans[i+1:] {
			if n := durationOf(next.StartS); n > start && n < end {
				end = n
				break
			}
		}
		settle := min(WindowSettle, (end-start)/3)
		w := EventWindow{Label: sp.Label, Service: sp.Service, Start: start + settle, End: end}
		w.LimitPerS = limitDuring(sc, sp.Service, w.Start)
		out = append(out, w)
	}
	return out
}

func durationOf(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// limitDuring returns the request limit of the named service at time t, in
// requests per second, after the limit events active then (0: none).
func limitDuring(sc *scenarios.Scenario, service string, t time.Duration) float64 {
	svc := sc.Service(service)
	if svc == nil {
		return 0
	}
	rps, rpm := svc.RequestsPerSecond, svc.RequestsPerMinute
	for i := range sc.Events {
		e := &sc.Events[i]
		if e.Service != service || t < e.At || t >= e.End() || !e.HasLimits() {
			continue
		}
		if e.LimitFactor > 0 {
			rps, rpm = rps*e.LimitFactor, rpm*e.LimitFactor
			continue
		}
		if e.RequestsPerSecond > 0 {
			rps = e.RequestsPerSecond
		}
		if e.RequestsPerMinute > 0 {
			rpm = e.RequestsPerMinute
		}
	}
	var limits []float64
	if rps > 0 {
		limits = append(limits, rps)
	}
	if rpm > 0 {
		limits = append(limits, rpm/60)
	}
	if len(limits) == 0 {
		return 0
	}
	return slices.Min(limits)
}

// WindowAcc counts one window's figures as the run goes.
type WindowAcc struct {
	// W is the window counted over.
	W                     EventWindow
	good, calls, attempts int64
	callAttempts          int64
	rateLimited           int64
}

func (a *WindowAcc) in(t time.Duration) bool { return t >= a.W.Start && t < a.W.End }

// WindowResults turns the collector's window counts into results for a
// strategy pacing at headroom.
func (c *Collector) WindowResults(headroom float64) []results.WindowResult {
	var out []results.WindowResult
	for i := range c.Windows {
		a := &c.Windows[i]
		r := results.WindowResult{
			Label: a.W.Label, Service: a.W.Service, StartS: setup.Round6(a.W.Start.Seconds()), EndS: setup.Round6(a.W.End.Seconds()),
			Attempts: a.attempts, RateLimited: a.rateLimited, Calls: a.calls,
			LimitPerS: setup.Round6(a.W.LimitPerS), Headroom: headroom,
		}
		if s := (a.W.End - a.W.Start).Seconds(); s > 0 {
			r.GoodputPerS = setup.Round6(float64(a.good) / s)
		}
		if a.attempts > 0 {
			r.RateLimitedShare = setup.Round6(float64(a.rateLimited) / float64(a.attempts))
		}
		if a.calls > 0 {
			r.AttemptsPerCall = setup.Round6(float64(a.callAttempts) / float64(a.calls))
		}
		out = append(out, r)
	}
	return out
}

// StrategyHeadroom is the fraction of the published limits st paces at:
// its headroom with token buckets, else 1.
func StrategyHeadroom(st *scenarios.Strategy) float64 {
	if st.TokenBucket && st.Headroom > 0 {
		return st.Headroom
	}
	return 1
}
