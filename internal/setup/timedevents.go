package setup

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
)

// ModelEvents returns the service-vocabulary form of the scenario's
// events on service svc, in file order (scenarios.Event.Model).
func ModelEvents(sc *scenarios.Scenario, svc *scenarios.Service) []spec.Event {
	var out []spec.Event
	for i := range sc.Events {
		if e := &sc.Events[i]; e.Service == svc.Name {
			out = append(out, e.Model(svc))
		}
	}
	return out
}

// EventSpans returns one span per scenario event that starts within the
// run, in start order (file order among events starting together), with a
// label in words; a span is cut at the end of the run (a duration
// shortened from the command line can end it early).
func EventSpans(sc *scenarios.Scenario) []results.EventSpan {
	var spans []results.EventSpan
	for i := range sc.Events {
		e := &sc.Events[i]
		if e.At >= sc.Duration {
			continue
		}
		spans = append(spans, results.EventSpan{
			Service: e.Service, Kind: strings.Join(e.Aspects(), "+"),
			StartS: e.At.Seconds(), EndS: min(e.End(), sc.Duration).Seconds(), Label: EventLabel(sc, e),
		})
	}
	slices.SortStableFunc(spans, func(a, b results.EventSpan) int {
		switch {
		case a.StartS < b.StartS:
			return -1
		case a.StartS > b.StartS:
			return 1
		}
		return 0
	})
	return spans
}

// EventLabel says in a few words what an event changes: "limits ×0.5",
// "rpm 300, max_concurrent 4", "latency ×2", "errors 20%", "overload
// 10%", "stall", "outage 503"; several changes are joined by ", ".
func EventLabel(sc *scenarios.Scenario, e *scenarios.Event) string {
	var parts []string
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	pct := func(v float64) string { return strconv.FormatFloat(math.Round(v*1000)/10, 'g', 6, 64) + "%" }
	if e.LimitFactor > 0 {
		parts = append(parts, "limits ×"+num(e.LimitFactor))
	}
	for _, l := range []struct {
		name string
		v    float64
	}{{"rps", e.RequestsPerSecond}, {"rpm", e.RequestsPerMinute}, {"tpm", e.TokensPerMinute}, {"max_concurrent", float64(e.MaxConcurrent)}} {
		if l.v > 0 {
			parts = append(parts, l.name+" "+num(l.v))
		}
	}
	if e.LatencyFactor > 0 {
		parts = append(parts, "latency ×"+num(e.LatencyFactor))
	}
	if e.HasErrorRate {
		parts = append(parts, "errors "+pct(e.ErrorRate))
	}
	if e.HasOverloadRate {
		parts = append(parts, "overload "+pct(e.OverloadRate))
	}
	if e.Stall {
		parts = append(parts, "stall")
	}
	if e.Outage {
		status := 503
		if svc := sc.Service(e.Service); svc != nil && svc.Headers == spec.HeadersAnthropic {
			status = 529
		}
		parts = append(parts, fmt.Sprintf("outage %d", status))
	}
	return strings.Join(parts, ", ")
}
