package reports

import (
	"cmp"
	"fmt"
	"image/color"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/simbench/simbench/reports/plots"
	"github.com/simbench/simbench/results"
)

// The timeline figures per service: a run of two or more services records
// each service's timeline (StrategyResult.ServiceTimelines), and the
// figures draw each against its own limits.

// MaxDrawnServices is the most services the timeline figures draw one by
// one (a line each in the in-flight figure, a panel per strategy each in
// the requests figure): a report's time and memory grow with every
// service drawn (a 10 s run of 200 services drawn one by one took 30 s
// and 500 MB of reports, against 3 s and 60 MB without). A run of more
// draws the MaxDrawnServices that took the most requests, and says so;
// the figures' all-services lines sum every service.
const MaxDrawnServices = 8

// drawnServices returns the services the timeline figures draw one by one:
// those with a timeline of their own in some strategy, in the order of the
// results' Limits (the rest after, by name), and of more than
// MaxDrawnServices the MaxDrawnServices that took the most requests over
// all strategies. It is nil when fewer than two have one: the strategy's
// own timeline is then the one service's. total is how many services have
// a timeline.
func drawnServices(r *results.Results) (drawn []string, total int) {
	requests := map[string]float64{}
	for i := range r.Strategies {
		for name, tl := range r.Strategies[i].ServiceTimelines {
			requests[name] += 0 // listed even when it took none
			for _, pt := range trimTimeline(r, tl) {
				requests[name] += pt.Started * pt.BucketS
			}
		}
	}
	if len(requests) < 2 {
		return nil, len(requests)
	}
	var out []string
	for _, l := range r.Limits {
		if _, ok := requests[l.Service]; ok && !slices.Contains(out, l.Service) {
			out = append(out, l.Service)
		}
	}
	rest := make([]string, 0, len(requests))
	for name := range requests {
		if !slices.Contains(out, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	out = append(out, rest...)
	if len(out) > MaxDrawnServices {
		// The busiest, ties in the order above; then back in that order.
		order := make(map[string]int, len(out))
		for k, name := range out {
			order[name] = k
		}
		slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(requests[b], requests[a]) })
		out = out[:MaxDrawnServices]
		slices.SortFunc(out, func(a, b string) int { return cmp.Compare(order[a], order[b]) })
	}
	return out, len(requests)
}

// drawnNote is what a figure's caption adds when it draws drawn of total
// services one by one: nothing when it draws them all.
func drawnNote(drawn []string, total int) string {
	if len(drawn) >= total {
		return ""
	}
	return fmt.Sprintf(" Drawn one by one: the %d of the %d services that took the most requests (%s); the others are in the all-services lines only.", len(drawn), total, strings.Join(drawn, ", "))
}

// serviceLimits are the limits drawn on a panel of service name: its own
// from the results' Limits, or the options' where they set the limits of
// the service the figures draw by default (Options.limits).
func (o Options) serviceLimits(r *results.Results, name string) drawnLimits {
	d := drawnLimits{service: name}
	for _, l := range r.Limits {
		if l.Service == name {
			d.ratePerS, d.inFlight, d.tokensPerMin = l.RequestsPerMinute/60, l.MaxConcurrent, l.TokensPerMinute
		}
	}
	if def := o.limits(r); def.service == name || def.service == "" {
		d.ratePerS, d.inFlight = def.ratePerS, def.inFlight
	}
	return d
}

// servicePalette colours the services' lines: dark and apart from every
// strategy's colour (plotutil's palette), from the teal of 429s and from
// the black of a global cap.
var servicePalette = []color.Color{
	color.RGBA{R: 140, G: 86, B: 75, A: 255},  // brown
	color.RGBA{R: 47, G: 79, B: 79, A: 255},   // slate
	color.RGBA{R: 128, G: 128, A: 255},        // olive
	color.RGBA{R: 110, G: 20, B: 110, A: 255}, // plum
}

// serviceColor is the colour of service j's lines (in the order of
// drawnServices), the same in every panel.
func serviceColor(j int) color.Color { return servicePalette[j%len(servicePalette)] }

// capTitle names s's caps on attempts in flight for a panel's title: its
// global cap and its per-service caps ("cap 8, web ≤ 4"), in the order of
// services, the rest by name; "no cap" when it has neither.
func capTitle(s *results.StrategyResult, services []string) string {
	var parts []string
	if s.MaxInFlight > 0 {
		parts = append(parts, fmt.Sprintf("cap %d", s.MaxInFlight))
	}
	names := make([]string, 0, len(s.MaxInFlightPerService))
	for name := range s.MaxInFlightPerService {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		ia, ib := slices.Index(services, a), slices.Index(services, b)
		if ia < 0 {
			ia = len(services)
		}
		if ib < 0 {
			ib = len(services)
		}
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a, b)
	})
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%s ≤ %d", name, s.MaxInFlightPerService[name]))
	}
	if len(parts) == 0 {
		return s.Name + " (no cap)"
	}
	return s.Name + " (" + strings.Join(parts, ", ") + ")"
}

// serviceInFlight draws on p, for strategy s, each service's attempts in
// flight (the peak per bucket) with the strategy's cap on it dashed and
// the service's own limit dotted, in the service's colour, t0 to t1
// seconds. The level lines are wide, light and under the data, so a line
// that sits at its cap shows inside the cap's dashes. It returns the
// highest value drawn, for the axis.
func serviceInFlight(p *plot.Plot, r *results.Results, s *results.StrategyResult, services []string, t0, t1 float64, opts Options) (float64, error) {
	type entry struct {
		label string
		thumb plot.Thumbnailer
	}
	var top float64
	var legend []entry
	var data []plot.Plotter
	for j, name := range services {
		col := serviceColor(j)
		if tl := trimTimeline(r, s.ServiceTimelines[name]); len(tl) > 0 {
			xys := make(plotter.XYs, len(tl))
			for k, pt := range tl {
				xys[k] = plotter.XY{X: pt.T, Y: float64(pt.InFlight)}
			}
			t, _, _ := plots.ScaleTop(xys, 0)
			top = max(top, t)
			l, err := plots.Line(Downsample(xys, opts.maxPoints()), col, nil)
			if err != nil {
				return 0, fmt.Errorf("reports: in flight of %s to %s: %w", s.Name, name, err)
			}
			data = append(data, l)
			legend = append(legend, entry{name + " in flight", l})
		}
		levels := []struct {
			label  string
			y      int
			dashes []vg.Length
		}{
			{fmt.Sprintf("%s cap %d", name, s.MaxInFlightPerService[name]), s.MaxInFlightPerService[name], plots.Dashed},
			{fmt.Sprintf("%s service limit %d", name, opts.serviceLimits(r, name).inFlight), opts.serviceLimits(r, name).inFlight, plots.Dotted},
		}
		for _, lv := range levels {
			if lv.y <= 0 {
				continue
			}
			l, err := plots.HLine(float64(lv.y), t0, t1, plots.Lighter(col), lv.dashes)
			if err != nil {
				return 0, err
			}
			l.Width = vg.Points(3)
			p.Add(l)
			legend = append(legend, entry{lv.label, l})
			top = max(top, float64(lv.y))
		}
	}
	p.Add(data...)
	for _, e := range legend {
		p.Legend.Add(e.label, e.thumb)
	}
	return top, nil
}

// serviceRequestRate draws the requests-per-second figure of a run of two
// or more services: a panel per strategy and service, each against the
// service's own limit, for as many strategies as MaxFigureStrategies
// panels hold.
func serviceRequestRate(r *results.Results, opts Options, services []string, total int) (*Figure, error) {
	t0, t1, ok := timelineSpan(r)
	if !ok {
		return nil, nil
	}
	strategies := min(len(r.Strategies), max(1, MaxFigureStrategies/len(services)))
	var panels []*plot.Plot
	for i := range strategies {
		s := &r.Strategies[i]
		for _, name := range services {
			p := plots.NewPlot(s.Name+" → "+name, "time (s)", "requests/s to "+name)
			p.X.Min, p.X.Max = t0, t1
			bands := eventBands(r, name, t0, t1)
			shadeEvents(p, bands)
			if err := requestPanel(p, i, s, trimTimeline(r, s.ServiceTimelines[name]), t0, t1, opts.serviceLimits(r, name), opts.maxPoints()); err != nil {
				return nil, err
			}
			labelEvents(p, bands)
			panels = append(panels, p)
		}
	}
	caption := ("One panel per strategy and service, each against that service's own limit: where the service refused requests (429s) the band is shaded; the gap between started and admitted is the 429s; a dotted line is the pace a strategy's token bucket aims at.") + drawnNote(services, total)
	if strategies < len(r.Strategies) {
		caption += fmt.Sprintf(" Drawn: the first %d of the %d strategies (%d panels at most).", strategies, len(r.Strategies), MaxFigureStrategies)
	}
	return newFigure("requests", true, caption,
		panelsHeight(len(panels)), panels...), nil
}
