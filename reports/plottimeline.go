package reports

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/simbench/simbench/results"
)

// timelineSpan returns the time range covered by all strategies' timelines, in s.
func timelineSpan(r *results.Results) (t0, t1 float64, ok bool) {
	t0, t1 = math.Inf(1), math.Inf(-1)
	for _, s := range r.Strategies {
		for _, p := range s.Timeline {
			t0, t1 = min(t0, p.T), max(t1, p.T+p.BucketS)
			ok = true
		}
	}
	return t0, t1, ok
}

// timelinePanels draws one panel per strategy on the run's time axis
// (timelineSpan), titled title(s) with yLabel up the side, the run's timed
// events shaded under the data and labelled over it on the first panel;
// fill draws strategy i's data, t0 to t1 seconds. It returns nil when the
// results have no timeline.
func timelinePanels(r *results.Results, yLabel string, title func(s *results.StrategyResult) string,
	fill func(p *plot.Plot, i int, s *results.StrategyResult, t0, t1 float64) error) ([]*plot.Plot, error) {
	t0, t1, ok := timelineSpan(r)
	if !ok {
		return nil, nil
	}
	bands := eventBands(r, "", t0, t1)
	var panels []*plot.Plot
	for i := range r.Strategies {
		s := &r.Strategies[i]
		p := newPlot(title(s), "time (s)", yLabel)
		p.X.Min, p.X.Max = t0, t1
		shadeEvents(p, bands)
		if err := fill(p, i, s, t0, t1); err != nil {
			return nil, err
		}
		if i == 0 {
			labelEvents(p, bands)
		}
		panels = append(panels, p)
	}
	return panels, nil
}

// levelLine adds to p a horizontal line at y from x0 to x1 with a legend
// entry, and returns it.
func levelLine(p *plot.Plot, label string, y, x0, x1 float64, c color.Color, dashes []vg.Length) (*plotter.Line, error) {
	l, err := hline(y, x0, x1, c, dashes)
	if err != nil {
		return nil, err
	}
	p.Add(l)
	p.Legend.Add(label, l)
	return l, nil
}

// serviceLimitLine adds the service's limit on requests in flight to p,
// dotted, from t0 to t1 seconds.
func serviceLimitLine(p *plot.Plot, limit int, t0, t1 float64) error {
	_, err := levelLine(p, fmt.Sprintf("service limit %d", limit), float64(limit), t0, t1, limitColor, dotted)
	return err
}

// inFlight draws, per strategy, its attempts in flight over time against
// its cap and the service's limit on requests in flight.
func inFlight(r *results.Results, opts Options) (*Figure, error) {
	lim := opts.limits(r)
	title := func(s *results.StrategyResult) string {
		if s.MaxInFlight > 0 {
			return fmt.Sprintf("%s (cap %d)", s.Name, s.MaxInFlight)
		}
		return s.Name + " (no cap)"
	}
	panels, err := timelinePanels(r, "attempts in flight", title, func(p *plot.Plot, i int, s *results.StrategyResult, t0, t1 float64) error {
		top := 0.0
		xys := make(plotter.XYs, len(s.Timeline))
		for k, pt := range s.Timeline {
			xys[k] = plotter.XY{X: pt.T, Y: float64(pt.InFlight)}
			top = max(top, float64(pt.InFlight))
		}
		if len(xys) > 0 {
			l, err := line(Downsample(xys, opts.maxPoints()), strategyColor(i), nil)
			if err != nil {
				return fmt.Errorf("reports: in flight of %s: %w", s.Name, err)
			}
			p.Add(l)
			p.Legend.Add("in flight (peak per bucket)", l)
		}
		if s.MaxInFlight > 0 {
			if _, err := levelLine(p, fmt.Sprintf("cap %d", s.MaxInFlight), float64(s.MaxInFlight), t0, t1, color.Black, dashed); err != nil {
				return err
			}
			top = max(top, float64(s.MaxInFlight))
		}
		if lim.inFlight > 0 {
			if err := serviceLimitLine(p, lim.inFlight, t0, t1); err != nil {
				return err
			}
			top = max(top, float64(lim.inFlight))
		}
		p.Y.Min, p.Y.Max = 0, fitTop(top)
		return nil
	})
	if panels == nil {
		return nil, err
	}
	return newFigure("in-flight", "In flight over time",
		"Does each strategy's line stay under its cap and the service's limit, or pile up in bursts?",
		panelsHeight(len(panels)), panels...), nil
}

// saturated reports the timeline buckets where the limit is saturated:
// the service answered 429, or it admitted at least 95% of its rate limit.
func saturated(tl []results.TimelinePoint, ratePerS float64) []bool {
	out := make([]bool, len(tl))
	for i, pt := range tl {
		admitted := pt.Started - pt.RateLimited
		out[i] = pt.RateLimited > 0 || (ratePerS > 0 && admitted >= 0.95*ratePerS)
	}
	return out
}

// spans merges the flagged buckets into time spans, joining spans less
// than gap apart, so a noisy run draws a handful of shaded bands.
func spans(tl []results.TimelinePoint, flags []bool, gap float64) [][2]float64 {
	var out [][2]float64
	for i, pt := range tl {
		if !flags[i] {
			continue
		}
		a, b := pt.T, pt.T+pt.BucketS
		if n := len(out); n > 0 && a-out[n-1][1] <= gap {
			out[n-1][1] = b
			continue
		}
		out = append(out, [2]float64{a, b})
	}
	return out
}

// requestRate draws, per strategy, the requests it started per second,
// those the service admitted and those it refused with 429, against the
// service's rate limit, with the buckets where the limit was saturated
// shaded.
func requestRate(r *results.Results, opts Options) (*Figure, error) {
	lim := opts.limits(r)
	title := func(s *results.StrategyResult) string { return s.Name }
	panels, err := timelinePanels(r, "requests/s", title, func(p *plot.Plot, i int, s *results.StrategyResult, t0, t1 float64) error {
		return requestPanel(p, i, s, t0, t1, lim.ratePerS, opts.maxPoints())
	})
	if panels == nil {
		return nil, err
	}
	return newFigure("requests", "Requests per second against the limit",
		"Where a strategy's admitted line meets the limit the band is shaded (the limit is saturated); the gap between started and admitted is the 429s.",
		panelsHeight(len(panels)), panels...), nil
}

// requestPanel draws strategy i's requests per second on p, t0 to t1
// seconds: the saturated buckets shaded, the limit of ratePerS requests/s
// (0: none) dashed under the lines, and the started, admitted and 429
// rates, each line downsampled to about maxPoints.
func requestPanel(p *plot.Plot, i int, s *results.StrategyResult, t0, t1, ratePerS float64, maxPoints int) error {
	top := 0.0
	started := make(plotter.XYs, len(s.Timeline))
	admitted := make(plotter.XYs, len(s.Timeline))
	limited := make(plotter.XYs, len(s.Timeline))
	any429 := false
	for k, pt := range s.Timeline {
		started[k] = plotter.XY{X: pt.T, Y: pt.Started}
		admitted[k] = plotter.XY{X: pt.T, Y: max(0, pt.Started-pt.RateLimited)}
		limited[k] = plotter.XY{X: pt.T, Y: pt.RateLimited}
		any429 = any429 || pt.RateLimited > 0
		top = max(top, pt.Started)
	}
	if ratePerS > 0 {
		top = max(top, ratePerS)
	}
	p.Y.Min, p.Y.Max = 0, fitTop(top)
	if shade := spans(s.Timeline, saturated(s.Timeline, ratePerS), (t1-t0)/300); len(shade) > 0 {
		b := &rects{fill: shadeColor}
		for _, sp := range shade {
			b.add(sp[0], sp[1], p.Y.Min, p.Y.Max)
		}
		p.Add(b)
		p.Legend.Add("limit saturated", b)
	}
	if ratePerS > 0 {
		// Under the lines, so an admitted rate at the limit shows.
		if _, err := levelLine(p, fmt.Sprintf("limit %s/s", num(ratePerS)), ratePerS, t0, t1, color.Black, dashed); err != nil {
			return err
		}
	}
	if len(s.Timeline) == 0 {
		return nil
	}
	series := []struct {
		xys   plotter.XYs
		label string
		col   color.Color
		width vg.Length
		skip  bool
	}{
		{admitted, "admitted/s", color.Gray{Y: 40}, 1, !any429},
		{limited, "429s/s", limitColor, 1, !any429},
		{started, "started/s", strategyColor(i), 1.5, false},
	}
	for _, sr := range series {
		if sr.skip {
			continue
		}
		l, err := line(Downsample(sr.xys, maxPoints), sr.col, nil)
		if err != nil {
			return fmt.Errorf("reports: requests/s of %s: %w", s.Name, err)
		}
		l.Width = vg.Points(float64(sr.width))
		p.Add(l)
		p.Legend.Add(sr.label, l)
	}
	return nil
}
