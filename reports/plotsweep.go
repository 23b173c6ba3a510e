package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/simbench/simbench/reports/plots"
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
// inside the frame. It returns where a cap goes on the axis (see plots.LogAxis).
func capAxis(p *plot.Plot, caps []int) (at func(int) float64) {
	c0, c1 := float64(caps[0]), float64(caps[len(caps)-1])
	logScale := c0 > 0 && c1/c0 >= 8
	at = func(c int) float64 { return float64(c) }
	if logScale {
		at = func(c int) float64 { return plots.Lg(float64(c)) }
		p.X.Min, p.X.Max = plots.Lg(c0/1.2), plots.Lg(c1*1.2)
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
		p.X.Tick.Marker = plots.LogAxis{}
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
	sp := newSweepPlot(rows, caps, opts.SweepStrategy)
	for j, r := range rows {
		if err := sp.addRow(j, r); err != nil {
			return nil, err
		}
	}
	if err := sp.finishAxes(100 * opts.maxShare()); err != nil {
		return nil, err
	}
	// With one load, the knee and the chosen cap are vertical lines
	// labelled inside the frame; with several, marks on each load's curves.
	for _, p := range sp.panels {
		var err error
		if sp.multi {
			err = sp.markPoints(p)
		} else {
			err = sp.markLines(p, rows[0], p == sp.share)
		}
		if err != nil {
			return nil, err
		}
	}
	caption := "Pick the cap where the p95 time to answer stops falling while the 429 share stays under the threshold; the knee is where more concurrency stops buying goodput."
	if !sp.multi && opts.Tolerance > 0 {
		z, err := toleranceZoom(rows[0], caps, opts.Tolerance, opts.maxShare())
		if err != nil {
			return nil, err
		}
		if z != nil {
			sp.panels = append(sp.panels, z)
			caption += fmt.Sprintf(" The last panel zooms on the best p95: the caps inside the shaded band, within %s%% of it, count as equal.", num(100*opts.Tolerance))
		}
	}
	if sp.multi {
		caption = "One line per load: see whether the chosen cap (ring) moves with the load, and where each load's goodput levels off (knee, triangle)."
	}
	return newFigure("sweep", false, caption, panelsHeight(len(sp.panels)), sp.panels...), nil
}

// toleranceZoom draws row r's p95 time to answer, with its intervals, on
// an axis scaled around the best p95 among the caps within the 429 share
// maxShare, the band within tol of it shaded, and the chosen cap: the
// rule's comparison, which the first panel's axis, scaled to the slowest
// cap, flattens into a line. nil when no cap qualifies.
func toleranceZoom(r results.SweepRow, caps []int, tol, maxShare float64) (*plot.Plot, error) {
	best := math.Inf(1)
	for _, p := range r.Points {
		if p.P95Ms.Answered() && p.RateLimitedShare <= maxShare {
			best = min(best, float64(p.P95Ms))
		}
	}
	if math.IsInf(best, 1) || best <= 0 {
		return nil, nil
	}
	p := plots.NewPlot(fmt.Sprintf("p95 near the best: the band within %s%% of it", num(100*tol)), "", "p95 time to answer (ms)")
	p.Title.TextStyle.Font = plots.Sans(11)
	at := capAxis(p, caps)
	lo, hi := best*(1-2*tol), best*(1+4*tol)
	for _, pt := range r.Points {
		if pt.Cap == r.Chosen && pt.P95HiMs.Answered() {
			hi = max(hi, min(float64(pt.P95HiMs)*1.02, 2*best))
		}
	}
	band := &plots.Rects{Fill: color.NRGBA{R: 0, G: 150, B: 70, A: 50}}
	band.Add(p.X.Min, p.X.Max, best, best*(1+tol))
	p.Add(band)
	p.Legend.Add(fmt.Sprintf("within %s%% of the best, %s ms", num(100*tol), num(math.Round(best))), band)
	var xys plotter.XYs
	above := 0
	for _, pt := range r.Points {
		if !pt.P95Ms.Answered() {
			above++
			continue
		}
		v := float64(pt.P95Ms)
		if v > hi {
			above++
		}
		xys = append(xys, plotter.XY{X: at(pt.Cap), Y: v})
		if pt.P95LoMs > 0 && pt.P95HiMs.Answered() && pt.P95HiMs > pt.P95LoMs {
			l, err := plots.VLine(at(pt.Cap), float64(pt.P95LoMs), float64(pt.P95HiMs), plots.StrategyColor(0), nil)
			if err != nil {
				return nil, err
			}
			p.Add(l)
		}
	}
	if len(xys) > 0 {
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("reports: sweep zoom: %w", err)
		}
		l.Color, l.Width = plots.StrategyColor(0), vg.Points(1.5)
		sc.Color, sc.Radius = plots.StrategyColor(0), vg.Points(2.5)
		p.Add(l, sc)
		label := "p95 (bars: 95% interval)"
		if above > 0 {
			label += fmt.Sprintf("; %d caps above the scale", above)
		}
		p.Legend.Add(label, l, sc)
	}
	if r.Chosen > 0 {
		l, err := plots.VLine(at(r.Chosen), lo, hi, plots.ChosenColor, plots.Dashed)
		if err != nil {
			return nil, err
		}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("chosen %d", r.Chosen), l)
	}
	// After the lines, which widen the axis to their data: the caps far
	// above the best leave the frame, clipped.
	p.Y.Min, p.Y.Max = lo, hi
	return p, nil
}

// sweepPlot is the sweep figure while it is drawn: its three panels, where
// a cap and a time go on them, and what the rows have drawn so far.
type sweepPlot struct {
	rows             []results.SweepRow
	multi            bool // several loads: a line each, labelled with its load
	lat, good, share *plot.Plot
	panels           []*plot.Plot          // lat, good, share
	at               func(int) float64     // a cap's place on the x axes
	ty               func(float64) float64 // a time's place on lat's y axis, in ms
	// logLat puts the times on a log axis spanning latLo to latHi ms.
	logLat                    bool
	latLo, latHi              float64
	latTop, goodTop, shareTop float64     // the highest values drawn on each panel
	never                     plotter.XYs // caps whose p95 turn got no answer, drawn at the top
	// chosen and knee are, per panel, where the rows' chosen caps and
	// knees sit on their curves.
	chosen, knee map[*plot.Plot]plotter.XYs
	// curves are, per panel, the points of every curve drawn on it.
	curves map[*plot.Plot][]plotter.XYs
}

// newSweepPlot sets up the sweep's three panels for the rows, on x axes
// for caps, titled for the strategy who (sweepPlot.latencyScale).
func newSweepPlot(rows []results.SweepRow, caps []int, who string) *sweepPlot {
	if who == "" {
		who = "sweep"
	}
	sp := &sweepPlot{
		rows:   rows,
		multi:  len(rows) > 1,
		lat:    plots.NewPlot(who+": time to answer against cap", "", "time to answer (ms)"),
		good:   plots.NewPlot("Goodput against cap", "", "successful calls/s"),
		share:  plots.NewPlot("Rate-limited share against cap", "", "429s per attempt (%)"),
		ty:     func(v float64) float64 { return v },
		chosen: map[*plot.Plot]plotter.XYs{}, knee: map[*plot.Plot]plotter.XYs{},
		curves: map[*plot.Plot][]plotter.XYs{},
	}
	sp.panels = []*plot.Plot{sp.lat, sp.good, sp.share}
	for _, p := range sp.panels {
		sp.at = capAxis(p, caps)
		p.Title.TextStyle.Font = plots.Sans(11)
	}
	sp.latencyScale()
	return sp
}

// latencyScale puts times spanning a factor of 10 or more (loads far
// apart, say) on a log axis, so the fastest load's curve is not flattened
// at the bottom.
func (sp *sweepPlot) latencyScale() {
	sp.latLo, sp.latHi = math.Inf(1), 0.0
	for _, r := range sp.rows {
		for _, p := range r.Points {
			for _, v := range []results.AnswerMs{p.P50Ms, p.P95Ms, p.P95LoMs, p.P95HiMs} {
				if v > 0 && v.Answered() {
					sp.latLo, sp.latHi = min(sp.latLo, float64(v)), max(sp.latHi, float64(v))
				}
			}
		}
	}
	sp.logLat = sp.latHi >= 10*sp.latLo
	if sp.logLat {
		sp.ty = plots.Lg
		sp.lat.Y.Label.Text = "time to answer (ms, log scale)"
		sp.lat.Y.Tick.Marker = plots.LogAxis{LogTicks: plots.LogTicks{MaxLabels: 8}}
	}
}

// label is the legend entry of row r's curve of what: what alone with one
// load, else the load first.
func (sp *sweepPlot) label(r results.SweepRow, what string) string {
	if !sp.multi {
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

// sweepSeries are one row's curves: p50 and p95 time to answer, goodput
// and 429 share against the cap, and the p95 interval's low and high
// edges.
type sweepSeries struct {
	p50, p95, goodput, share plotter.XYs
	bandLo, bandHi           []plotter.XY
}

// series reads row r's points into its curves, and notes its chosen cap
// and knee, the caps it never answered at, and the panels' tops.
func (sp *sweepPlot) series(r results.SweepRow) sweepSeries {
	var c sweepSeries
	for _, p := range r.Points {
		x := sp.at(p.Cap)
		if p.P50Ms.Answered() {
			c.p50 = append(c.p50, plotter.XY{X: x, Y: sp.ty(float64(p.P50Ms))})
			sp.latTop = max(sp.latTop, float64(p.P50Ms))
		}
		p95 := math.NaN() // where the point sits on lat, for the marks
		if p.P95Ms.Answered() {
			p95 = sp.ty(float64(p.P95Ms))
			c.p95 = append(c.p95, plotter.XY{X: x, Y: p95})
			sp.latTop = max(sp.latTop, float64(p.P95Ms))
		} else {
			sp.never = append(sp.never, plotter.XY{X: x})
		}
		if p.P95LoMs > 0 && p.P95HiMs.Answered() && p.P95Ms.Answered() {
			c.bandLo = append(c.bandLo, plotter.XY{X: x, Y: sp.ty(float64(p.P95LoMs))})
			c.bandHi = append(c.bandHi, plotter.XY{X: x, Y: sp.ty(float64(p.P95HiMs))})
			sp.latTop = max(sp.latTop, float64(p.P95HiMs))
		}
		c.goodput = append(c.goodput, plotter.XY{X: x, Y: p.GoodputPerS})
		sp.goodTop = max(sp.goodTop, p.GoodputPerS)
		c.share = append(c.share, plotter.XY{X: x, Y: 100 * p.RateLimitedShare})
		sp.shareTop = max(sp.shareTop, 100*p.RateLimitedShare)
		for k, y := range []float64{p95, p.GoodputPerS, 100 * p.RateLimitedShare} {
			if math.IsNaN(y) {
				continue
			}
			pl := sp.panels[k]
			if p.Cap == r.Chosen {
				sp.chosen[pl] = append(sp.chosen[pl], plotter.XY{X: x, Y: y})
			}
			if p.Cap == r.Knee {
				sp.knee[pl] = append(sp.knee[pl], plotter.XY{X: x, Y: y})
			}
		}
	}
	return c
}

// addRow draws row j's curves in its colour: the p95 interval as a band,
// p95 and p50 time to answer, goodput and 429 share.
func (sp *sweepPlot) addRow(j int, r results.SweepRow) error {
	col := plots.StrategyColor(j)
	c := sp.series(r)
	if len(c.bandLo) > 1 {
		slices.Reverse(c.bandHi)
		poly, err := plotter.NewPolygon(plotter.XYs(append(c.bandLo, c.bandHi...)))
		if err != nil {
			return fmt.Errorf("reports: sweep band: %w", err)
		}
		rgba := color.RGBAModel.Convert(col).(color.RGBA)
		poly.Color = color.NRGBA{R: rgba.R, G: rgba.G, B: rgba.B, A: 110}
		poly.LineStyle = draw.LineStyle{Color: color.NRGBA{R: rgba.R, G: rgba.G, B: rgba.B, A: 160}, Width: vg.Points(0.5)}
		sp.lat.Add(poly)
		sp.lat.Legend.Add(sp.label(r, bandLabel(r.Points)), poly)
	}
	curves := []struct {
		p      *plot.Plot
		what   string
		xys    plotter.XYs
		dashes []vg.Length
	}{
		{sp.lat, "p95", c.p95, nil},
		{sp.lat, "p50", c.p50, plots.Dashed},
		{sp.good, "", c.goodput, nil},
		{sp.share, "", c.share, nil},
	}
	if !sp.multi {
		curves[2].what, curves[3].what = "goodput", "429 share"
	}
	for _, c := range curves {
		if len(c.xys) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(c.xys)
		if err != nil {
			return fmt.Errorf("reports: sweep %s: %w", c.what, err)
		}
		l.Color, l.Width, l.Dashes = col, vg.Points(1.5), c.dashes
		sc.Color, sc.Radius = col, vg.Points(2.5)
		c.p.Add(l, sc)
		c.p.Legend.Add(sp.label(r, c.what), l, sc)
		sp.curves[c.p] = append(sp.curves[c.p], c.xys)
	}
	return nil
}

// finishAxes fits the panels' y axes to what the rows drew, draws the
// threshold of 429 share (in %) and crosses at the top of lat for the caps
// whose p95 turn was never answered.
func (sp *sweepPlot) finishAxes(threshold float64) error {
	sp.shareTop = max(sp.shareTop, threshold)
	sp.lat.Y.Min, sp.lat.Y.Max = 0, plots.FitTop(sp.latTop)
	if sp.logLat {
		sp.lat.Y.Min, sp.lat.Y.Max = plots.Lg(sp.latLo/1.15), plots.Lg(sp.latHi*1.15)
	}
	sp.good.Y.Min, sp.good.Y.Max = 0, plots.FitTop(sp.goodTop)
	sp.share.Y.Min, sp.share.Y.Max = 0, plots.FitTop(sp.shareTop)
	if _, err := plots.LevelLine(sp.share, fmt.Sprintf("threshold %s%%", num(threshold)), threshold, sp.share.X.Min, sp.share.X.Max, color.Black, plots.Dotted); err != nil {
		return err
	}
	if len(sp.never) == 0 {
		return nil
	}
	for i := range sp.never {
		sp.never[i].Y = sp.lat.Y.Max
	}
	sc, err := plotter.NewScatter(sp.never)
	if err != nil {
		return err
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: plots.LimitColor, Radius: vg.Points(4), Shape: draw.CrossGlyph{}}
	sp.lat.Add(sc)
	sp.lat.Legend.Add("p95 never answered", sc)
	return nil
}

// curveAt is the highest point p's curves have at x.
func (sp *sweepPlot) curveAt(p *plot.Plot, x float64) float64 {
	top := math.Inf(-1)
	for _, c := range sp.curves[p] {
		for _, xy := range c {
			if xy.X == x {
				top = max(top, xy.Y)
			}
		}
	}
	return top
}

// markLines draws the single load r's knee (dotted, labelled left of the
// line) and chosen cap (dashed, labelled right of it) on p as vertical
// lines; when they are the same cap, one dashed line labelled "knee =
// chosen". Labels sit at the top of the frame, or at the bottom when the
// curve is high there, or in the middle on the panel whose threshold line
// runs along the top (mid), so that no label covers a line.
func (sp *sweepPlot) markLines(p *plot.Plot, r results.SweepRow, mid bool) error {
	type mark struct {
		cp     int
		what   string
		col    color.Color
		dashes []vg.Length
		right  bool
	}
	marks := []mark{{r.Knee, "knee", plots.KneeColor, plots.Dotted, false}, {r.Chosen, "chosen", plots.ChosenColor, plots.Dashed, true}}
	if r.Knee == r.Chosen {
		marks = []mark{{r.Chosen, "knee = chosen", plots.ChosenColor, plots.Dashed, true}}
	}
	for _, v := range marks {
		if v.cp == 0 {
			continue
		}
		x := sp.at(v.cp)
		l, err := plots.VLine(x, p.Y.Min, p.Y.Max, v.col, v.dashes)
		if err != nil {
			return err
		}
		text := fmt.Sprintf("%s %d", v.what, v.cp)
		p.Add(l)
		p.Legend.Add(text, l)
		y, yAlign, dy := p.Y.Max, draw.YTop, vg.Length(-3)
		switch {
		case mid:
			y, yAlign, dy = p.Y.Min+0.5*(p.Y.Max-p.Y.Min), draw.YCenter, 0
		case sp.curveAt(p, x) > p.Y.Min+0.6*(p.Y.Max-p.Y.Min):
			y, yAlign, dy = p.Y.Min, draw.YBottom, 3
		}
		if err := plots.MarkLabel(p, x, y, text, v.col, v.right, yAlign, dy); err != nil {
			return err
		}
	}
	return nil
}

// markPoints marks on p, over several loads' curves, each row's chosen
// cap with a ring and its knee with a triangle.
func (sp *sweepPlot) markPoints(p *plot.Plot) error {
	for _, mk := range []struct {
		at    plotter.XYs
		shape draw.GlyphDrawer
		what  string
	}{{sp.chosen[p], draw.RingGlyph{}, "chosen cap"}, {sp.knee[p], draw.PyramidGlyph{}, "knee"}} {
		if len(mk.at) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(mk.at)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(6), Shape: mk.shape}
		p.Add(sc)
		p.Legend.Add(mk.what, sc)
	}
	return nil
}

// bandLabel names the p95 interval band, saying how wide it is at most
// when that is too thin to see beside the curve (under 2% of the largest
// p95).
func bandLabel(points []results.SweepPoint) string {
	hw, top := 0.0, 0.0
	for _, p := range points {
		if p.Seeds >= 2 && p.P95HiMs.Answered() {
			hw = max(hw, float64(p.P95HiMs-p.P95LoMs)/2)
		}
		if p.P95Ms.Answered() {
			top = max(top, float64(p.P95Ms))
		}
	}
	if top > 0 && hw < 0.02*top {
		return fmt.Sprintf("p95 95%% interval (at most ±%s ms: thinner than the line)", num(math.Round(hw)))
	}
	return "p95 95% interval"
}
