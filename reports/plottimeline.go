package reports

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/simbench/simbench/reports/plots"
	"github.com/simbench/simbench/results"
)

// timelineSpan returns the time range covered by all strategies' timelines
// within the run (runTimeline), in s.
func timelineSpan(r *results.Results) (t0, t1 float64, ok bool) {
	t0, t1 = math.Inf(1), math.Inf(-1)
	for i := range r.Strategies {
		for _, p := range runTimeline(r, &r.Strategies[i]) {
			t0, t1 = min(t0, p.T), max(t1, p.T+p.BucketS)
			ok = true
		}
	}
	return t0, t1, ok
}

// runTimeline is s's timeline within the run: the buckets that end by the
// run's duration. A bucket the end cuts short (or one past it) holds less
// than a bucket's work, and would draw a drop to 0 that looks like a crash.
func runTimeline(r *results.Results, s *results.StrategyResult) []results.TimelinePoint {
	return trimTimeline(r, s.Timeline)
}

// trimTimeline is tl within the run (see runTimeline).
func trimTimeline(r *results.Results, tl []results.TimelinePoint) []results.TimelinePoint {
	if r.DurationS <= 0 {
		return tl
	}
	for len(tl) > 0 && tl[len(tl)-1].T+tl[len(tl)-1].BucketS > r.DurationS+1e-9 {
		tl = tl[:len(tl)-1]
	}
	return tl
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
		p := plots.NewPlot(title(s), "time (s)", yLabel)
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

// serviceLimitLine adds the service's limit on requests in flight to p,
// dotted, from t0 to t1 seconds.
func serviceLimitLine(p *plot.Plot, limit int, t0, t1 float64) error {
	_, err := plots.LevelLine(p, fmt.Sprintf("service limit %d", limit), float64(limit), t0, t1, plots.LimitColor, plots.Dotted)
	return err
}

// inFlight draws, per strategy, its attempts in flight over time against
// its cap and the service's limit on requests in flight.
func inFlight(r *results.Results, opts Options) (*Figure, error) {
	lim := opts.limits(r)
	services, total := drawnServices(r)
	title := func(s *results.StrategyResult) string { return capTitle(s, services) }
	panels, err := timelinePanels(r, "attempts in flight", title, func(p *plot.Plot, i int, s *results.StrategyResult, t0, t1 float64) error {
		tl := runTimeline(r, s)
		xys := make(plotter.XYs, len(tl))
		atCap := 0
		for k, pt := range tl {
			xys[k] = plotter.XY{X: pt.T, Y: float64(pt.InFlight)}
			if s.MaxInFlight > 0 && pt.InFlight >= s.MaxInFlight {
				atCap++
			}
		}
		// The levels drawn below the line: the axis shows them whatever
		// the line does.
		floor := float64(s.MaxInFlight)
		if services == nil {
			floor = max(floor, float64(lim.inFlight))
		}
		top, spike, clipped := plots.ScaleTop(xys, floor)
		if len(xys) > 0 {
			// Wide and under the cap's dashes, so a line that sits at the
			// cap shows between them.
			l, err := plots.Line(Downsample(xys, opts.maxPoints()), plots.StrategyColor(i), nil)
			if err != nil {
				return fmt.Errorf("reports: in flight of %s: %w", s.Name, err)
			}
			l.Width = vg.Points(4)
			p.Add(l)
			label := "in flight (peak per bucket)"
			if services != nil {
				label = "all services in flight (peak per bucket)"
			}
			if clipped {
				label += fmt.Sprintf("; %s at %s s, off the scale", num(spike.Y), num(spike.X))
			}
			p.Legend.Add(label, l)
		}
		if s.MaxInFlight > 0 {
			label := fmt.Sprintf("cap %d", s.MaxInFlight)
			if len(tl) > 0 {
				label += fmt.Sprintf(", reached in %s%% of buckets", num(math.Round(100*float64(atCap)/float64(len(tl)))))
			}
			// Thin, with wide gaps: the line at the cap shows through.
			l, err := plots.LevelLine(p, label, float64(s.MaxInFlight), t0, t1, color.Black, plots.CapDashes)
			if err != nil {
				return err
			}
			l.Width = vg.Points(1)
			top = max(top, float64(s.MaxInFlight))
		}
		if services != nil {
			svcTop, err := serviceInFlight(p, r, s, services, t0, t1, opts)
			if err != nil {
				return err
			}
			top = max(top, svcTop)
		} else if lim.inFlight > 0 {
			if err := serviceLimitLine(p, lim.inFlight, t0, t1); err != nil {
				return err
			}
			top = max(top, float64(lim.inFlight))
		}
		p.Y.Min, p.Y.Max = 0, plots.FitTop(top)
		if clipped {
			p.Y.Max = plots.FitTop(top) * 1.15
		}
		return nil
	})
	if panels == nil {
		return nil, err
	}
	caption := "Does each strategy's line stay under its cap and the service's limit, or pile up in bursts?"
	if services != nil {
		caption = "Does each strategy's line stay under its caps and the services' limits, or pile up in bursts? The wide line is every service together (under the global cap, dashed black); each service's line is drawn with its own cap (dashed) and limit (dotted) in its colour." + drawnNote(services, total)
	}
	return newFigure("in-flight", false, caption, panelsHeight(len(panels)), panels...), nil
}

// saturated reports the timeline buckets where the limit was saturated:
// the service answered 429. A strategy running close to the limit without
// a 429 is not shaded: nothing was refused.
func saturated(tl []results.TimelinePoint) []bool {
	out := make([]bool, len(tl))
	for i, pt := range tl {
		out[i] = pt.RateLimited > 0
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
	if services, total := drawnServices(r); services != nil {
		return serviceRequestRate(r, opts, services, total)
	}
	lim := opts.limits(r)
	title := func(s *results.StrategyResult) string { return s.Name }
	yLabel := "requests/s"
	caption := "Where the service refused requests (429s) the band is shaded; the gap between started and admitted is the 429s; a dotted line is the pace a strategy's token bucket aims at."
	if n := limitedServices(r); n > 1 {
		yLabel = "requests/s, all services"
		caption += fmt.Sprintf(" The lines count the requests to all %d services; the limit drawn is %s's, the service a turn calls most.", n, lim.service)
	}
	panels, err := timelinePanels(r, yLabel, title, func(p *plot.Plot, i int, s *results.StrategyResult, t0, t1 float64) error {
		return requestPanel(p, i, s, runTimeline(r, s), t0, t1, lim, opts.maxPoints())
	})
	if panels == nil {
		return nil, err
	}
	return newFigure("requests", false, caption,
		panelsHeight(len(panels)), panels...), nil
}

// limitedServices counts the services of r with a limit of their own.
func limitedServices(r *results.Results) int {
	n := 0
	for _, l := range r.Limits {
		if l.RequestsPerMinute > 0 || l.TokensPerMinute > 0 || l.MaxConcurrent > 0 {
			n++
		}
	}
	return n
}

// requestPanel draws strategy i's requests per second (timeline tl) on
// p, t0 to t1 seconds: the buckets with 429s shaded, the service's limit
// (none when lim has no rate) dashed under the lines and named after its
// service, the pace the strategy's token bucket aims at dotted, and the
// started, admitted and 429 rates, each line downsampled to about
// maxPoints. A start-up spike far above the rest is named, not scaled to.
func requestPanel(p *plot.Plot, i int, s *results.StrategyResult, tl []results.TimelinePoint, t0, t1 float64, lim drawnLimits, maxPoints int) (err error) {
	ratePerS := lim.ratePerS
	started := make(plotter.XYs, len(tl))
	admitted := make(plotter.XYs, len(tl))
	limited := make(plotter.XYs, len(tl))
	any429 := false
	for k, pt := range tl {
		started[k] = plotter.XY{X: pt.T, Y: pt.Started}
		admitted[k] = plotter.XY{X: pt.T, Y: max(0, pt.Started-pt.RateLimited)}
		limited[k] = plotter.XY{X: pt.T, Y: pt.RateLimited}
		any429 = any429 || pt.RateLimited > 0
	}
	top, spike, clipped := plots.ScaleTop(started, ratePerS)
	p.Y.Min, p.Y.Max = 0, plots.FitTop(top)
	if clipped {
		p.Y.Max *= 1.15
	}
	if shade := spans(tl, saturated(tl), (t1-t0)/300); len(shade) > 0 {
		b := &plots.Rects{Fill: plots.ShadeColor}
		for _, sp := range shade {
			b.Add(sp[0], sp[1], p.Y.Min, p.Y.Max)
		}
		p.Add(b)
		p.Legend.Add("429s (limit saturated)", b)
	}
	if ratePerS > 0 {
		// Under the lines, so an admitted rate at the limit shows.
		label := fmt.Sprintf("limit %s/s", num(ratePerS))
		if lim.service != "" {
			label = fmt.Sprintf("%s limit %s/s", lim.service, num(ratePerS))
		}
		if lim.tokensPerMin > 0 {
			label += fmt.Sprintf(" and %s tokens/min", count(lim.tokensPerMin))
		}
		if _, err := plots.LevelLine(p, label, ratePerS, t0, t1, color.Black, plots.Dashed); err != nil {
			return err
		}
	}
	// The pace goes over the lines, in black: a strategy that keeps its
	// pace starts requests right at it, and a line of its own colour
	// under them would vanish.
	defer func() {
		if h := s.Headroom; ratePerS > 0 && h > 0 && h < 1 && err == nil {
			var l *plotter.Line
			if l, err = plots.LevelLine(p, fmt.Sprintf("pace %s/s (headroom %s)", num(ratePerS*h), num(h)), ratePerS*h, t0, t1, color.Black, plots.PaceDots); err == nil {
				l.Width = vg.Points(2)
			}
		}
	}()
	if len(tl) == 0 {
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
		{limited, "429s/s", plots.RefusedColor, 1, !any429}, // teal: apart from every strategy's colour
		{started, startedLabel(spike, clipped), plots.StrategyColor(i), 1.5, false},
	}
	for _, sr := range series {
		if sr.skip {
			continue
		}
		l, err := plots.Line(Downsample(sr.xys, maxPoints), sr.col, nil)
		if err != nil {
			return fmt.Errorf("reports: requests/s of %s: %w", s.Name, err)
		}
		l.Width = vg.Points(float64(sr.width))
		p.Add(l)
		p.Legend.Add(sr.label, l)
	}
	return nil
}

// startedLabel names the started line, and the spike off the scale when
// the axis was not set by it.
func startedLabel(spike plotter.XY, clipped bool) string {
	if clipped {
		return fmt.Sprintf("started/s; %s at %s s, off the scale", num(spike.Y), num(spike.X))
	}
	return "started/s"
}
