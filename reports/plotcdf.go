package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/simbench/simbench/reports/plots"
	"github.com/simbench/simbench/results"
)

// latencyCDF draws, per strategy, the share of turns answered within a
// time: the answer CDF, which levels off below 1 for a strategy that failed
// turns. Results written before the answer CDF existed fall back to the
// turn-latency CDF of every finished turn. Dotted lines at 0.5 and 0.95
// let a reader take p50 and p95 off the curves.
func latencyCDF(r *results.Results, _ Options) (*Figure, error) {
	answers := false
	caption := "Read each strategy's p50 and p95 where its line crosses the dotted 0.5 and 0.95 lines; further left is faster."
	points := func(s *results.StrategyResult) []results.CDFPoint { return s.LatencyCDF }
	title, xLabel, yLabel := "Turn latency, cumulative", "turn latency (ms, log scale)", "share of turns finished"
	if slices.ContainsFunc(r.Strategies, func(s results.StrategyResult) bool { return len(s.AnswerCDF) > 0 }) {
		answers = true
		caption = "Read p50 and p95 where each line crosses the dotted 0.5 and 0.95 lines; a line that levels off below 1 failed that share of its turns, which count as never answered."
		points = func(s *results.StrategyResult) []results.CDFPoint { return s.AnswerCDF }
		title, xLabel, yLabel = "Turns answered, cumulative", "time to answer (ms, log scale)", "share of turns answered"
	}
	p := plots.NewPlot(title, xLabel, yLabel)
	p.X.Tick.Marker = plots.LogAxis{}
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = plot.ConstantTicks{
		{Value: 0, Label: "0"}, {Value: 0.25, Label: "0.25"}, {Value: 0.5, Label: "0.5"},
		{Value: 0.75, Label: "0.75"}, {Value: 0.95, Label: "0.95"}, {Value: 1, Label: "1"},
	}
	drawn := false
	lo, hi := math.Inf(1), math.Inf(-1)
	var lines []*plotter.Line
	for i := range r.Strategies {
		s := &r.Strategies[i]
		var xys plotter.XYs
		for _, c := range points(s) {
			if c.Ms > 0 { // a log axis has no place for 0
				xys = append(xys, plotter.XY{X: plots.Lg(c.Ms), Y: c.P})
				lo, hi = min(lo, c.Ms), max(hi, c.Ms)
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plots.Line(xys, plots.StrategyColor(i), plotutil.Dashes(i/len(plotutil.DefaultColors)))
		if err != nil {
			return nil, fmt.Errorf("reports: latency CDF of %s: %w", s.Name, err)
		}
		lines = append(lines, l)
		p.Legend.Add(s.Name, l)
		drawn = true
	}
	if !drawn {
		return nil, nil
	}
	plots.LogRange(&p.X, lo, hi)
	for _, q := range []float64{0.5, 0.95} {
		l, err := plots.HLine(q, p.X.Min, p.X.Max, color.Gray{Y: 110}, plots.Dotted)
		if err != nil {
			return nil, err
		}
		l.Width = vg.Points(1)
		p.Add(l)
	}
	for _, l := range lines {
		p.Add(l)
	}
	p.Legend.Add("p50, p95", guide{})
	return newFigure("latency-cdf", answers, caption, figureHeight, p), nil
}

// guide is the legend thumbnail of the CDF's dotted percentile lines.
type guide struct{}

// Thumbnail implements plot.Thumbnailer.
func (guide) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(draw.LineStyle{Color: color.Gray{Y: 110}, Width: vg.Points(1), Dashes: plots.Dotted}, c.Min.X, y, c.Max.X, y)
}
