package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/simbench/simbench/results"
)

func sortedByCap(points []results.SweepPoint) []results.SweepPoint {
	pts := slices.Clone(points)
	slices.SortStableFunc(pts, func(a, b results.SweepPoint) int { return a.Cap - b.Cap })
	return pts
}

// sweepCaps returns the distinct caps of every row, ascending.
func sweepCaps(rows []results.SweepRow) []int {
	var caps []int
	for _, r := range rows {
		for _, p := range r.Points {
			caps = append(caps, p.Cap)
		}
	}
	slices.Sort(caps)
	return slices.Compact(caps)
}

// doubling reports whether each cap is twice the one before.
func doubling(caps []int) bool {
	if len(caps) < 3 {
		return false
	}
	for i := 1; i < len(caps); i++ {
		if caps[i] != 2*caps[i-1] {
			return false
		}
	}
	return true
}

// capAxis sets p's X axis for the caps: logarithmic when they double or
// span a factor of 8 or more (labelled as such), with a tick at each cap
// when there are few, and a margin so a mark at the first or last cap sits
// inside the frame. It returns where a cap goes on the axis (see logAxis).
func capAxis(p *plot.Plot, caps []int) (at func(int) float64) {
	c0, c1 := float64(caps[0]), float64(caps[len(caps)-1])
	logScale := c0 > 0 && c1/c0 >= 8
	at = func(c int) float64 { return float64(c) }
	if logScale {
		at = func(c int) float64 { return lg(float64(c)) }
		p.X.Min, p.X.Max = lg(c0/1.2), lg(c1*1.2)
		p.X.Label.Text = "max in flight (log scale)"
		if doubling(caps) {
			p.X.Label.Text = "max in flight (log₂ scale: each step doubles)"
		}
	} else {
		pad := max((c1-c0)*0.05, 0.5)
		p.X.Min, p.X.Max = c0-pad, c1+pad
		p.X.Label.Text = "max in flight"
	}
	switch {
	case len(caps) <= 14:
		var ticks plot.ConstantTicks
		for _, c := range caps {
			ticks = append(ticks, plot.Tick{Value: at(c), Label: fmt.Sprint(c)})
		}
		p.X.Tick.Marker = ticks
	case logScale:
		p.X.Tick.Marker = logAxis{}
	}
	return at
}

// sweepFigure draws the sweep: time to answer, goodput and the 429 share
// against the cap, one line per load (labelled when there are several),
// the p95 interval over seeds as a band when the points carry one, each
// row's chosen cap (a ring) and knee (a diamond), and with a single load
// both as labelled vertical lines inside the frame.
func sweepFigure(_ *results.Results, opts Options) (*Figure, error) {
	var rows []results.SweepRow
	for _, r := range opts.Sweep {
		if len(r.Points) > 0 {
			r.Points = sortedByCap(r.Points)
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil, nil
	}
	caps := sweepCaps(rows)
	if caps[0] < 1 {
		return nil, fmt.Errorf("reports: sweep point with cap %d; caps start at 1", caps[0])
	}
	who := opts.SweepStrategy
	if who == "" {
		who = "sweep"
	}
	lat := newPlot(who+": time to answer against cap", "", "time to answer (ms)")
	good := newPlot("Goodput against cap", "", "successful calls/s")
	share := newPlot("Rate-limited share against cap", "", "429s per attempt (%)")
	panels := []*plot.Plot{lat, good, share}
	var at func(int) float64
	for _, p := range panels {
		at = capAxis(p, caps)
		p.Title.TextStyle.Font = sans(11)
	}
	multi := len(rows) > 1
	// Times spanning a factor of 10 or more (loads far apart, say) go on a
	// log axis, so the fastest load's curve is not flattened at the bottom.
	latLo, latHi := math.Inf(1), 0.0
	for _, r := range rows {
		for _, p := range r.Points {
			for _, v := range []results.AnswerMs{p.P50Ms, p.P95Ms, p.P95LoMs, p.P95HiMs} {
				if v > 0 && v.Answered() {
					latLo, latHi = min(latLo, float64(v)), max(latHi, float64(v))
				}
			}
		}
	}
	logLat := latHi >= 10*latLo
	ty := func(v float64) float64 { return v }
	if logLat {
		ty = lg
		lat.Y.Label.Text = "time to answer (ms, log scale)"
		lat.Y.Tick.Marker = logAxis{logTicks{maxLabels: 8}}
	}
	label := func(r results.SweepRow, what string) string {
		if !multi {
			return what
		}
		l := r.Load
		if l == "" {
			l = "as in the scenario"
		}
		if what == "" {
			return l
		}
		return l + " " + what
	}
	type pt struct {
		x, y float64
	}
	var latTop, goodTop, shareTop float64
	var never plotter.XYs // caps whose p95 turn got no answer, drawn at the top
	type marks struct{ chosen, knee []pt }
	markAt := map[*plot.Plot]*marks{lat: {}, good: {}, share: {}}
	curvePts := map[*plot.Plot][]plotter.XYs{}
	for j, r := range rows {
		col := strategyColor(j)
		var p50, p95, gp, sh plotter.XYs
		var band []plotter.XY
		var bandHi []plotter.XY
		for _, p := range r.Points {
			x := at(p.Cap)
			if p.P50Ms.Answered() {
				p50 = append(p50, plotter.XY{X: x, Y: ty(float64(p.P50Ms))})
				latTop = max(latTop, float64(p.P50Ms))
			}
			if p.P95Ms.Answered() {
				p95 = append(p95, plotter.XY{X: x, Y: ty(float64(p.P95Ms))})
				latTop = max(latTop, float64(p.P95Ms))
			} else {
				never = append(never, plotter.XY{X: x})
			}
			if p.P95LoMs > 0 && p.P95HiMs.Answered() && p.P95Ms.Answered() {
				band = append(band, plotter.XY{X: x, Y: ty(float64(p.P95LoMs))})
				bandHi = append(bandHi, plotter.XY{X: x, Y: ty(float64(p.P95HiMs))})
				latTop = max(latTop, float64(p.P95HiMs))
			}
			gp = append(gp, plotter.XY{X: x, Y: p.GoodputPerS})
			goodTop = max(goodTop, p.GoodputPerS)
			sh = append(sh, plotter.XY{X: x, Y: 100 * p.RateLimitedShare})
			shareTop = max(shareTop, 100*p.RateLimitedShare)
			y := func(pl *plot.Plot) float64 {
				switch pl {
				case lat:
					if p.P95Ms.Answered() {
						return ty(float64(p.P95Ms))
					}
					return math.NaN()
				case good:
					return p.GoodputPerS
				}
				return 100 * p.RateLimitedShare
			}
			for _, pl := range panels {
				if v := y(pl); !math.IsNaN(v) {
					if p.Cap == r.Chosen {
						markAt[pl].chosen = append(markAt[pl].chosen, pt{x, v})
					}
					if p.Cap == r.Knee {
						markAt[pl].knee = append(markAt[pl].knee, pt{x, v})
					}
				}
			}
		}
		if len(band) > 1 {
			slices.Reverse(bandHi)
			poly, err := plotter.NewPolygon(plotter.XYs(append(band, bandHi...)))
			if err != nil {
				return nil, fmt.Errorf("reports: sweep band: %w", err)
			}
			c := color.RGBAModel.Convert(col).(color.RGBA)
			poly.Color = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 60}
			poly.LineStyle.Width = 0
			lat.Add(poly)
			lat.Legend.Add(label(r, "p95 95% interval"), poly)
		}
		curves := []struct {
			p      *plot.Plot
			what   string
			xys    plotter.XYs
			dashes []vg.Length
		}{
			{lat, "p95", p95, nil},
			{lat, "p50", p50, dashed},
			{good, "", gp, nil},
			{share, "", sh, nil},
		}
		if !multi {
			curves[2].what, curves[3].what = "goodput", "429 share"
		}
		for _, c := range curves {
			if len(c.xys) == 0 {
				continue
			}
			l, sc, err := plotter.NewLinePoints(c.xys)
			if err != nil {
				return nil, fmt.Errorf("reports: sweep %s: %w", c.what, err)
			}
			l.Color, l.Width, l.Dashes = col, vg.Points(1.5), c.dashes
			sc.Color, sc.Radius = col, vg.Points(2.5)
			c.p.Add(l, sc)
			c.p.Legend.Add(label(r, c.what), l, sc)
			curvePts[c.p] = append(curvePts[c.p], c.xys)
		}
	}
	threshold := 100 * opts.maxShare()
	shareTop = max(shareTop, threshold)
	lat.Y.Min, lat.Y.Max = 0, fitTop(latTop)
	if logLat {
		lat.Y.Min, lat.Y.Max = lg(latLo/1.15), lg(latHi*1.15)
	}
	good.Y.Min, good.Y.Max = 0, fitTop(goodTop)
	share.Y.Min, share.Y.Max = 0, fitTop(shareTop)
	l, err := hline(threshold, share.X.Min, share.X.Max, color.Black, dotted)
	if err != nil {
		return nil, err
	}
	share.Add(l)
	share.Legend.Add(fmt.Sprintf("threshold %s%%", num(threshold)), l)
	if len(never) > 0 {
		for i := range never {
			never[i].Y = lat.Y.Max
		}
		sc, err := plotter.NewScatter(never)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: limitColor, Radius: vg.Points(4), Shape: draw.CrossGlyph{}}
		lat.Add(sc)
		lat.Legend.Add("p95 never answered", sc)
	}

	// curveAt is the highest point a panel's curves have at x.
	curveAt := func(p *plot.Plot, x float64) float64 {
		top := math.Inf(-1)
		for _, c := range curvePts[p] {
			for _, xy := range c {
				if xy.X == x {
					top = max(top, xy.Y)
				}
			}
		}
		return top
	}
	// With one load, the knee and the chosen cap are vertical lines
	// labelled inside the frame; with several, marks on each load's curves.
	var kneeLegend, chosenLegend bool
	for _, p := range panels {
		m := markAt[p]
		if !multi {
			r := rows[0]
			for _, v := range []struct {
				cp     int
				what   string
				col    color.Color
				dashes []vg.Length
				right  bool
			}{{r.Knee, "knee", kneeColor, dotted, false}, {r.Chosen, "chosen", chosenCol, dashed, true}} {
				if v.cp == 0 {
					continue
				}
				x := at(v.cp)
				l, err := vline(x, p.Y.Min, p.Y.Max, v.col, v.dashes)
				if err != nil {
					return nil, err
				}
				p.Add(l)
				p.Legend.Add(fmt.Sprintf("%s %d", v.what, v.cp), l)
				// The label goes at the top of the frame, or at the bottom
				// when the curve is high there.
				y, yAlign, dy := p.Y.Max, draw.YTop, vg.Length(-3)
				if curveAt(p, x) > p.Y.Min+0.6*(p.Y.Max-p.Y.Min) {
					y, yAlign, dy = p.Y.Min, draw.YBottom, 3
				}
				lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x, Y: y}}, Labels: []string{fmt.Sprintf("%s %d", v.what, v.cp)}})
				if err != nil {
					return nil, err
				}
				sty := text.Style{Color: v.col, Font: sans(9), Handler: lb.TextStyle[0].Handler, XAlign: draw.XLeft, YAlign: yAlign}
				lb.Offset = vg.Point{X: 3, Y: dy}
				if !v.right {
					sty.XAlign = draw.XRight
					lb.Offset.X = -3
				}
				lb.TextStyle[0] = sty
				p.Add(lb)
			}
			continue
		}
		for _, mk := range []struct {
			at    []pt
			shape draw.GlyphDrawer
			what  string
			seen  *bool
		}{{m.chosen, draw.RingGlyph{}, "chosen cap", &chosenLegend}, {m.knee, draw.PyramidGlyph{}, "knee", &kneeLegend}} {
			if len(mk.at) == 0 {
				continue
			}
			var xys plotter.XYs
			for _, a := range mk.at {
				xys = append(xys, plotter.XY{X: a.x, Y: a.y})
			}
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(6), Shape: mk.shape}
			p.Add(sc)
			p.Legend.Add(mk.what, sc)
		}
	}
	caption := "Pick the cap where the p95 time to answer stops falling while the 429 share stays under the threshold; the knee is where more concurrency stops buying goodput."
	if multi {
		caption = "One line per load: see whether the chosen cap (ring) moves with the load, and where each load's goodput levels off (knee, triangle)."
	}
	return newFigure("sweep", "Sweep over the concurrency cap", caption, panelsHeight(3), panels...), nil
}
