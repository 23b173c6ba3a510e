package reports

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
)

// twoServiceResults is a run of 20 s against a model service and a web
// service: strategy "per-service" caps each service, "unbounded" has no
// cap, nor has "read-back" (its caps absent). web refuses some requests.
func twoServiceResults() *results.Results {
	r := &results.Results{Scenario: "two", DurationS: 20, Limits: []results.ServiceLimits{
		{Service: "model", RequestsPerMinute: 4000, TokensPerMinute: 2_000_000, CallsPerTurn: 1},
		{Service: "web", RequestsPerMinute: 1200, MaxConcurrent: 8, CallsPerTurn: 3},
	}}
	for i, name := range []string{"per-service", "unbounded", "read-back"} {
		s := results.StrategyResult{Name: name, ServiceTimelines: map[string][]results.TimelinePoint{}}
		for k := range 20 {
			t := float64(k)
			model := results.TimelinePoint{T: t, BucketS: 1, Started: 10, InFlight: 3}
			web := results.TimelinePoint{T: t, BucketS: 1, Started: 30 + float64(i), RateLimited: float64(k % 3), InFlight: 4}
			s.ServiceTimelines["model"] = append(s.ServiceTimelines["model"], model)
			s.ServiceTimelines["web"] = append(s.ServiceTimelines["web"], web)
			s.Timeline = append(s.Timeline, results.TimelinePoint{T: t, BucketS: 1, Started: model.Started + web.Started,
				RateLimited: web.RateLimited, InFlight: model.InFlight + web.InFlight})
		}
		switch name {
		case "per-service":
			s.MaxInFlightPerService = map[string]int{"web": 4, "model": 16}
		case "unbounded":
			s.MaxInFlightPerService = map[string]int{}
		}
		r.Strategies = append(r.Strategies, s)
	}
	return r
}

// With two services, the requests figure draws a panel per strategy and
// service, each against that service's own limit and named for it.
func TestRequestsDrawsEachService(t *testing.T) {
	svg := figureSVG(t, twoServiceResults(), Options{}, "requests")
	for _, want := range []string{
		"per-service → model", "per-service → web", "unbounded → web", "read-back → model",
		"model limit 66.67/s and 2,000,000 tokens/min", "web limit 20/s", "requests/s to web", "limit saturated",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("requests.svg lacks %q", want)
		}
	}
	if strings.Contains(svg, "all services") {
		t.Error("requests.svg still counts all services together")
	}
}

// Without per-service timelines (results written before they were), the
// requests figure draws every service together, and says so.
func TestRequestsWithoutServiceTimelinesDrawsAllTogether(t *testing.T) {
	r := twoServiceResults()
	for i := range r.Strategies {
		r.Strategies[i].ServiceTimelines = nil
	}
	svg := figureSVG(t, r, Options{}, "requests")
	if !strings.Contains(svg, "requests/s, all services") || strings.Contains(svg, "→") {
		t.Error("requests.svg without per-service timelines does not draw all services together")
	}
}

// The in-flight figure titles a strategy by its caps, per-service ones
// included, and draws each service's line with its cap and limit.
func TestInFlightNamesPerServiceCaps(t *testing.T) {
	svg := figureSVG(t, twoServiceResults(), Options{}, "in-flight")
	for _, want := range []string{
		"per-service (model ≤ 16, web ≤ 4)", "unbounded (no cap)", "read-back (no cap)",
		"model in flight", "web in flight", "web cap 4", "model cap 16", "web service limit 8",
		"all services in flight",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("in-flight.svg lacks %q", want)
		}
	}
	if strings.Contains(svg, "per-service (no cap)") {
		t.Error(`a strategy with per-service caps is titled "no cap"`)
	}
}

func TestCapTitle(t *testing.T) {
	tests := []struct {
		give results.StrategyResult
		want string
	}{
		{results.StrategyResult{Name: "s", MaxInFlight: 8, MaxInFlightPerService: map[string]int{}}, "s (cap 8)"},
		{results.StrategyResult{Name: "s", MaxInFlight: 8, MaxInFlightPerService: map[string]int{"crm": 1}}, "s (cap 8, crm ≤ 1)"},
		// In the order of the services drawn, the rest by name.
		{results.StrategyResult{Name: "s", MaxInFlightPerService: map[string]int{"crm": 1, "search_api": 4, "b": 2, "a": 3}}, "s (search_api ≤ 4, crm ≤ 1, a ≤ 3, b ≤ 2)"},
		{results.StrategyResult{Name: "s", MaxInFlightPerService: map[string]int{}}, "s (no cap)"},
		{results.StrategyResult{Name: "s"}, "s (no cap)"},
	}
	for _, tt := range tests {
		if got := capTitle(&tt.give, []string{"search_api", "crm"}); got != tt.want {
			t.Errorf("capTitle(%v, %v) = %q, want %q", tt.give.MaxInFlight, tt.give.MaxInFlightPerService, got, tt.want)
		}
	}
}

// A panel per strategy and service keeps to MaxFigureStrategies panels:
// with two services, half as many strategies are drawn, and the caption
// says so.
func TestServiceRequestsKeepsThePanelBound(t *testing.T) {
	r := twoServiceResults()
	base := r.Strategies[1]
	r.Strategies = nil
	for i := range MaxFigureStrategies {
		s := base
		s.Name = fmt.Sprintf("s%d", i)
		r.Strategies = append(r.Strategies, s)
	}
	figs, err := Figures(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		if f.Name != "requests" {
			continue
		}
		if len(f.plots) != MaxFigureStrategies {
			t.Errorf("%d panels, want %d", len(f.plots), MaxFigureStrategies)
		}
		if want := fmt.Sprintf("the first %d of the %d strategies", MaxFigureStrategies/2, MaxFigureStrategies); !strings.Contains(f.Caption, want) {
			t.Errorf("caption %q lacks %q", f.Caption, want)
		}
		return
	}
	t.Fatal("no requests figure")
}

// Of more than MaxDrawnServices services, the timeline figures draw the
// MaxDrawnServices busiest one by one, in the order of the results'
// Limits, and their captions name them and how many were left to the
// all-services lines. Service k of 3·MaxDrawnServices takes k requests a
// second, so the busiest are the last MaxDrawnServices, whichever order
// Limits lists them in (here the reverse).
func TestManyServicesDrawTheBusiest(t *testing.T) {
	n := 3 * MaxDrawnServices
	r := manyServiceResults(n, 10)
	var want []string
	for k := n - 1; k >= n-MaxDrawnServices; k-- {
		want = append(want, fmt.Sprintf("svc%02d", k))
	}
	drawn, total := drawnServices(r)
	if fmt.Sprint(drawn) != fmt.Sprint(want) || total != n {
		t.Fatalf("drawn %v of %d, want %v of %d", drawn, total, want, n)
	}
	figs, err := Figures(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	note := fmt.Sprintf("Drawn one by one: the %d of the %d services that took the most requests (%s)", MaxDrawnServices, n, strings.Join(want, ", "))
	for _, name := range []string{"requests", "in-flight"} {
		i := slices.IndexFunc(figs, func(f Figure) bool { return f.Name == name })
		if i < 0 {
			t.Fatalf("no %s figure", name)
		}
		f := figs[i]
		if !strings.Contains(f.Caption, note) {
			t.Errorf("%s caption %q lacks %q", name, f.Caption, note)
		}
		if name == "requests" && len(f.plots) != MaxDrawnServices {
			t.Errorf("requests: %d panels, want %d", len(f.plots), MaxDrawnServices)
		}
	}
}

// manyServiceResults is a run of one strategy over n services for secs
// seconds, a timeline bucket a second: service svcK takes K requests a
// second; the results' Limits list the services in reverse.
func manyServiceResults(n, secs int) *results.Results {
	r := &results.Results{Scenario: "many", DurationS: float64(secs)}
	s := results.StrategyResult{Name: "only", ServiceTimelines: map[string][]results.TimelinePoint{}}
	for k := n - 1; k >= 0; k-- {
		r.Limits = append(r.Limits, results.ServiceLimits{Service: fmt.Sprintf("svc%02d", k), RequestsPerMinute: 6000})
	}
	for k := range n {
		name := fmt.Sprintf("svc%02d", k)
		for sec := range secs {
			s.ServiceTimelines[name] = append(s.ServiceTimelines[name], results.TimelinePoint{T: float64(sec), BucketS: 1, Started: float64(k), InFlight: 1})
		}
	}
	for sec := range secs {
		s.Timeline = append(s.Timeline, results.TimelinePoint{T: float64(sec), BucketS: 1, Started: float64(n * (n - 1) / 2), InFlight: n})
	}
	r.Strategies = []results.StrategyResult{s}
	return r
}

// BenchmarkPlotsManyServices writes the figures (PNG and SVG) of a 60 s
// run of 200 services: the time and memory the reports of a run with
// many services take (MaxDrawnServices bounds them).
func BenchmarkPlotsManyServices(b *testing.B) {
	r := manyServiceResults(200, 60)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := WritePlots(b.TempDir(), r, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
