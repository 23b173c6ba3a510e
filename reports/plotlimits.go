package reports

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/simbench/simbench/internal/downsample"
	"github.com/simbench/simbench/reports/plots"
	"github.com/simbench/simbench/results"
)

// steps turns a limit trace into the corners of its step line on a time
// axis ending at t1: each limit holds until the next step, the last until
// t1. A trace longer than maxPoints/2 steps is first downsampled, keeping
// its extremes, so the line has at most about maxPoints corners.
func steps(pts []results.LimitPoint, t1 float64, maxPoints int) plotter.XYs {
	pts = downsample.MinMax(pts, max(4, maxPoints/2), func(p *results.LimitPoint) float64 { return float64(p.Limit) })
	xys := make(plotter.XYs, 0, 2*len(pts)+1)
	for i, p := range pts {
		if i > 0 {
			xys = append(xys, plotter.XY{X: p.T, Y: float64(pts[i-1].Limit)})
		}
		xys = append(xys, plotter.XY{X: p.T, Y: float64(p.Limit)})
	}
	if n := len(pts); n > 0 && t1 > pts[n-1].T {
		xys = append(xys, plotter.XY{X: t1, Y: float64(pts[n-1].Limit)})
	}
	return xys
}

// limitsFigure draws, per service with an adaptive limit, each adaptive
// strategy's limit over time as steps, with every strategy's static cap
// as a dashed line in the strategy's colour, the service's own limit on
// requests in flight dotted, and the service's timed events shaded. It is
// left out when no strategy has a limit trace.
func limitsFigure(r *results.Results, opts Options) (*Figure, error) {
	services := tracedServices(r)
	if len(services) == 0 {
		return nil, nil
	}
	t0, t1, ok := timeAxis(r)
	if !ok {
		return nil, nil
	}
	var panels []*plot.Plot
	for _, svc := range services {
		p := plots.NewPlot("Concurrency limit: "+svc, "time (s)", "limit (attempts in flight)")
		p.X.Min, p.X.Max = t0, t1
		bands := eventBands(r, svc, t0, t1)
		shadeEvents(p, bands)
		top := 0.0
		for i := range r.Strategies {
			s := &r.Strategies[i]
			if s.MaxInFlight <= 0 {
				continue
			}
			l, err := plots.LevelLine(p, fmt.Sprintf("%s: cap %d", s.Name, s.MaxInFlight), float64(s.MaxInFlight), t0, t1, plots.StrategyColor(i), plots.Dashed)
			if err != nil {
				return nil, err
			}
			l.Width = vg.Points(1)
			top = max(top, float64(s.MaxInFlight))
		}
		for _, lim := range r.Limits {
			if lim.Service != svc || lim.MaxConcurrent <= 0 {
				continue
			}
			if err := serviceLimitLine(p, lim.MaxConcurrent, t0, t1); err != nil {
				return nil, err
			}
			top = max(top, float64(lim.MaxConcurrent))
		}
		for i := range r.Strategies {
			s := &r.Strategies[i]
			pts := s.LimitTrace[svc]
			if len(pts) == 0 {
				continue
			}
			xys := steps(pts, t1, opts.maxPoints())
			for _, xy := range xys {
				top = max(top, xy.Y)
			}
			l, err := plots.Line(xys, plots.StrategyColor(i), nil)
			if err != nil {
				return nil, fmt.Errorf("reports: limit of %s for %s: %w", s.Name, svc, err)
			}
			p.Add(l)
			p.Legend.Add(s.Name+" (adaptive)", l)
		}
		p.Y.Min, p.Y.Max = 0, plots.FitTop(top)
		labelEvents(p, bands)
		panels = append(panels, p)
	}
	return newFigure("limits", false,
		"Each adaptive strategy's limit steps down when the service refuses or slows and climbs back while it answers; dashed lines are the static caps it competes with, shaded bands the timed events.",
		panelsHeight(len(panels)), panels...), nil
}
