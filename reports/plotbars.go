package reports

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/simbench/simbench/reports/plots"
	"github.com/simbench/simbench/results"
)

// rects is a plotter of filled rectangles given in data coordinates: bars
// (on linear or log axes, from any base) and shaded time spans.
type rects struct {
	fill color.Color
	r    []vg.Rectangle // in data units, not points
}

func (b *rects) add(x0, x1, y0, y1 float64) {
	b.r = append(b.r, vg.Rectangle{Min: vg.Point{X: vg.Length(x0), Y: vg.Length(y0)}, Max: vg.Point{X: vg.Length(x1), Y: vg.Length(y1)}})
}

// Plot implements plot.Plotter.
func (b *rects) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	c.SetColor(b.fill)
	clamp := func(v, lo, hi vg.Length) vg.Length { return min(max(v, lo), hi) }
	for _, r := range b.r {
		x0 := clamp(trX(float64(r.Min.X)), c.Min.X, c.Max.X)
		x1 := clamp(trX(float64(r.Max.X)), c.Min.X, c.Max.X)
		y0 := clamp(trY(float64(r.Min.Y)), c.Min.Y, c.Max.Y)
		y1 := clamp(trY(float64(r.Max.Y)), c.Min.Y, c.Max.Y)
		c.Fill(vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x1, Y: y1}}.Path())
	}
}

// Thumbnail implements plot.Thumbnailer.
func (b *rects) Thumbnail(c *draw.Canvas) {
	c.SetColor(b.fill)
	pad := (c.Max.Y - c.Min.Y) / 6
	r := vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: c.Min.Y + pad}, Max: vg.Point{X: c.Max.X, Y: c.Max.Y - pad}}
	c.Fill(r.Path())
}

// attemptsHistogram draws, per strategy, how many calls took 1, 2, 3, …
// attempts, split into the calls that succeeded and those that gave up.
func attemptsHistogram(r *results.Results, _ Options) (*Figure, error) {
	most := 0
	var hi int64
	for _, s := range r.Strategies {
		most = max(most, len(s.AttemptsPerCall))
		for _, n := range s.AttemptsPerCall {
			hi = max(hi, n)
		}
	}
	if most == 0 || hi == 0 {
		return nil, nil
	}
	var panels []*plot.Plot
	for i := range r.Strategies {
		if s := &r.Strategies[i]; len(s.AttemptsPerCall) > 0 {
			panels = append(panels, attemptsPanel(i, s, most, hi))
		}
	}
	return newFigure("attempts", false,
		"How many calls needed 1, 2, 3, … attempts, and after how many the calls that gave up stopped: red bars are calls that never got a result.",
		panelsHeight(len(panels)), panels...), nil
}

// failedAt is how many of s's calls gave up after k+1 attempts (0 when the
// results do not record it).
func failedAt(s *results.StrategyResult, k int) int64 {
	if k < len(s.AttemptsPerFailedCall) {
		return s.AttemptsPerFailedCall[k]
	}
	return 0
}

// attemptsBase is where the attempts histogram's bars start, below 1 so
// that a single call shows.
const attemptsBase = 0.5

// attemptsPanel is strategy i's attempts histogram, on axes for up to most
// attempts and hi calls: bars of the calls that succeeded and of those
// that gave up, after each number of attempts, or of all calls when the
// results do not record which failed.
func attemptsPanel(i int, s *results.StrategyResult, most int, hi int64) *plot.Plot {
	known := len(s.AttemptsPerFailedCall) > 0 || s.Failed == 0
	var calls, retried, gaveUp int64
	ok := &rects{fill: plots.OKColor} // the same in every panel: green succeeded, red gave up
	failed := &rects{fill: plots.FailColor}
	unknown := &rects{fill: plots.NeutralGray}
	for k, n := range s.AttemptsPerCall {
		calls += n
		if k > 0 {
			retried += n
		}
		x := float64(k + 1)
		if !known {
			if n > 0 {
				unknown.add(x-0.3, x+0.3, plots.Lg(attemptsBase), plots.Lg(float64(n)))
			}
			continue
		}
		f := failedAt(s, k)
		gaveUp += f
		if n-f > 0 {
			ok.add(x-0.38, x, plots.Lg(attemptsBase), plots.Lg(float64(n-f)))
		}
		if f > 0 {
			failed.add(x, x+0.38, plots.Lg(attemptsBase), plots.Lg(float64(f)))
		}
	}
	title := fmt.Sprintf("%s: %s calls, %s retried, %s gave up", s.Name, num(float64(calls)), num(float64(retried)), num(float64(gaveUp)))
	if !known {
		title = fmt.Sprintf("%s: %s calls, %s retried, %s failed", s.Name, num(float64(calls)), num(float64(retried)), num(float64(s.Failed)))
	}
	p := plots.NewPlot(title, "attempts the call took", "calls (log scale)")
	p.Title.TextStyle.Font = plots.Sans(11)
	var ticks plot.ConstantTicks
	for k := 1; k <= most; k++ {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: fmt.Sprint(k)})
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = 0.5, float64(most)+0.5
	p.Y.Tick.Marker = plots.LogAxis{LogTicks: plots.LogTicks{MaxLabels: 6}}
	p.Y.Min, p.Y.Max = plots.Lg(attemptsBase), plots.Lg(float64(hi)*1.6)
	if known {
		p.Add(ok, failed)
		p.Legend.Add("succeeded", ok)
		p.Legend.Add("gave up", failed)
	} else {
		p.Add(unknown)
		p.Legend.Add("calls (outcome", unknown)
		p.Legend.Add("  not recorded)")
	}
	return p
}
