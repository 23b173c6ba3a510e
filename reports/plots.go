package reports

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/simbench/simbench/results"
)

// Figure sizes: 600 pt is 800 px at the PNG's 96 dpi.
const (
	figureWidth  = 600 * vg.Inch / 72
	figureHeight = 360 * vg.Inch / 72
	panelHeight  = 190 * vg.Inch / 72
	pngDPI       = 96
	// legendGap separates a panel's frame from its legend, on the right.
	legendGap = 10
)

// Options tune the plots and the HTML report. The zero value draws every
// plot the results allow, with the limits the results record.
type Options struct {
	// RateLimitPerS is the service's request limit in requests per second,
	// drawn on the requests-per-second plot; 0 takes it from the results'
	// Limits (the service a turn calls most), which is what a run records.
	RateLimitPerS float64
	// ConcurrencyLimit is the service's limit on requests in flight, drawn
	// on the in-flight plot; 0 takes it from the results' Limits.
	ConcurrencyLimit int
	// Sweep holds a sweep of one strategy over a range of caps, one row per
	// load; when a row has points the sweep plot is drawn, one line per load,
	// with each row's knee and chosen cap marked.
	Sweep []results.SweepRow
	// SweepStrategy names the strategy the sweep varied, for titles.
	SweepStrategy string
	// MaxRateLimitedShare is the 429 share the sweep's chosen cap could
	// have, drawn as a threshold line; 0 means results.DefaultMaxRateLimitedShare.
	MaxRateLimitedShare float64
	// MaxPoints bounds the points of each timeline line (see Downsample);
	// 0 means DefaultMaxPoints.
	MaxPoints int
	// Plans are the recommendation arithmetic to show in the HTML report,
	// one per service.
	Plans []PlanLines
}

func (o Options) maxPoints() int {
	if o.MaxPoints == 0 {
		return DefaultMaxPoints
	}
	return o.MaxPoints
}

func (o Options) maxShare() float64 {
	if o.MaxRateLimitedShare == 0 {
		return results.DefaultMaxRateLimitedShare
	}
	return o.MaxRateLimitedShare
}

// drawnLimits are the limits the timeline figures draw: the options' when
// set, else those of the service a turn calls most among the results'
// Limits that have one (the first such service on a tie), so a report
// re-rendered from results.json draws what the run drew.
type drawnLimits struct {
	ratePerS float64 // requests/s, 0: none
	inFlight int     // 0: none
}

func (o Options) limits(r *results.Results) drawnLimits {
	var d drawnLimits
	var best *results.ServiceLimits
	for i := range r.Limits {
		l := &r.Limits[i]
		if l.RequestsPerMinute <= 0 && l.TokensPerMinute <= 0 && l.MaxConcurrent <= 0 {
			continue
		}
		if best == nil || l.CallsPerTurn > best.CallsPerTurn {
			best = l
		}
	}
	if best != nil {
		d = drawnLimits{ratePerS: best.RequestsPerMinute / 60, inFlight: best.MaxConcurrent}
	}
	if o.RateLimitPerS > 0 {
		d.ratePerS = o.RateLimitPerS
	}
	if o.ConcurrencyLimit > 0 {
		d.inFlight = o.ConcurrencyLimit
	}
	return d
}

// Figure is one plot, ready to render as SVG or PNG. Rendering the same
// figure twice gives the same bytes.
type Figure struct {
	// Name is the file name without extension, such as "latency-cdf".
	Name string
	// Title is the figure's heading; Caption says, in one line, what to
	// look at in it.
	Title, Caption string
	w, h           vg.Length
	plots          []*plot.Plot  // panels, top to bottom
	legends        []plot.Legend // one per panel, drawn right of its frame
}

// newFigure lays out panels top to bottom. Each panel's legend moves out of
// its data area into a column on the right of the frames, so that no
// legend covers data.
func newFigure(name, title, caption string, h vg.Length, panels ...*plot.Plot) *Figure {
	f := &Figure{Name: name, Title: title, Caption: caption, w: figureWidth, h: h, plots: panels}
	for _, p := range panels {
		l := p.Legend
		l.Top, l.Left = true, true
		f.legends = append(f.legends, l)
		p.Legend = plot.NewLegend()
	}
	return f
}

// Size returns the figure's width and height in points (1/72 inch).
func (f Figure) Size() (w, h vg.Length) { return f.w, f.h }

// layout places the panels on dc: each panel's canvas, and the canvas of
// its legend, right of the panel's frame and level with its data area.
func (f Figure) layout(dc draw.Canvas) (panels, legends []draw.Canvas) {
	var legendW vg.Length
	for i := range f.legends {
		r := f.legends[i].Rectangle(dc)
		legendW = max(legendW, r.Max.X-r.Min.X)
	}
	if legendW > 0 {
		legendW += legendGap
	}
	area := draw.Crop(dc, 0, -legendW, 0, 0)
	rows := make([][]*plot.Plot, len(f.plots))
	for i, p := range f.plots {
		rows[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(rows), Cols: 1, PadTop: 4, PadBottom: 4, PadLeft: 4, PadRight: 8, PadY: 10}
	for i, c := range plot.Align(rows, tiles, area) {
		panels = append(panels, c[0])
		data := f.plots[i].DataCanvas(c[0])
		legends = append(legends, draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: c[0].Max.X + legendGap, Y: data.Min.Y},
			Max: vg.Point{X: dc.Max.X - 4, Y: data.Max.Y},
		}})
	}
	return panels, legends
}

func (f Figure) draw(c vg.CanvasSizer) {
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	panels, legends := f.layout(dc)
	for i, p := range f.plots {
		p.Draw(panels[i])
		l := f.legends[i]
		l.Draw(legends[i])
	}
}

// render draws the figure on c. gonum/plot panics on data it cannot draw
// (a log axis with nothing above zero, say); render turns that into an
// error, so a strange run costs a plot, not the report.
func (f Figure) render(c vg.CanvasSizer) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("reports: drawing %s: %v", f.Name, p)
		}
	}()
	f.draw(c)
	return nil
}

// SVG renders the figure as an SVG document.
func (f Figure) SVG() ([]byte, error) {
	c := vgsvg.New(f.w, f.h)
	if err := f.render(c); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("reports: rendering %s as SVG: %w", f.Name, err)
	}
	return b.Bytes(), nil
}

// PNG renders the figure as a PNG image at 96 dpi (800 pixels wide).
func (f Figure) PNG() ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(pngDPI))
	if err := f.render(c); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
		return nil, fmt.Errorf("reports: rendering %s as PNG: %w", f.Name, err)
	}
	return b.Bytes(), nil
}

// Figures builds every plot the results and options allow, in report order:
// time-to-answer CDF, in flight over time, requests per second over time,
// the adaptive limits over time (only when a strategy has a limit trace),
// attempts per call, the backoff comparison (only when strategies that
// share a cap differ in their retry policy), and the sweep. A figure whose
// data is missing from the results (no timeline, say) is left out. No
// figure ranks strategies by speed or volume without their failures beside
// it. Every figure whose x axis is run time shades the run's timed events
// (Results.Events).
func Figures(r *results.Results, opts Options) ([]Figure, error) {
	if r == nil {
		return nil, errors.New("reports: no results")
	}
	builders := []func(*results.Results, Options) (*Figure, error){
		latencyCDF, inFlight, requestRate, limitsFigure, attemptsHistogram, backoffComparison, sweepFigure,
	}
	var figs []Figure
	for _, build := range builders {
		f, err := build(r, opts)
		if err != nil {
			return nil, err
		}
		if f != nil {
			figs = append(figs, *f)
		}
	}
	return figs, nil
}

// WritePlots writes every figure of Figures into dir as NAME.png and
// NAME.svg, each file atomically, and returns the file names written,
// relative to dir, PNG before SVG for each figure.
func WritePlots(dir string, r *results.Results, opts Options) ([]string, error) {
	figs, err := Figures(r, opts)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range figs {
		for _, ext := range []string{"png", "svg"} {
			render := f.PNG
			if ext == "svg" {
				render = f.SVG
			}
			data, err := render()
			if err != nil {
				return names, err
			}
			name := f.Name + "." + ext
			if err := WriteFileAtomic(filepath.Join(dir, name), data, 0o644); err != nil {
				return names, err
			}
			names = append(names, name)
		}
	}
	return names, nil
}

// sans is the font of every plot text: Liberation Sans, which gonum embeds
// for PNGs; SVG viewers fall back to their own sans-serif.
func sans(size vg.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

// newPlot returns a plot with the report's fonts, a grid and the given
// title and axis labels (units included in the labels).
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = sans(13)
	p.Title.Padding = 6
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(11)
		a.Tick.Label.Font = sans(10)
	}
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.X.Tick.Marker = linTicks{}
	p.Y.Tick.Marker = linTicks{}
	p.Legend.TextStyle.Font = sans(10)
	p.Legend.ThumbnailWidth = 18
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	p.Add(g)
	return p
}

// linTicks labels a linear axis at about five round values (1, 2 or 5
// × 10ⁿ apart), written the way the tables write numbers ("10,000", not
// "1e+04"), with an unlabelled mark between labels.
type linTicks struct{}

// Ticks implements plot.Ticker.
func (linTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: fixed(lo, 3, true)}}
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step*2) * step / 2; v <= hi+step*1e-9; v += step / 2 {
		v = math.Round(v/step*2) * step / 2
		t := plot.Tick{Value: v}
		if math.Abs(math.Remainder(v, step)) < step*1e-6 {
			t.Label = fixed(v, 3, true)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// logTicks marks a log axis at every 1…9 × 10ⁿ and labels 1, 2 and 5 × 10ⁿ
// (100, 200, 500, 1k, 2k, 5k), so that a reader can place a value within a
// decade. An axis too short for that many labels (more than maxLabels) is
// labelled at 1 and 3 × 10ⁿ, or 1 × 10ⁿ; one that holds fewer than two of
// them is labelled at every mark. maxLabels 0 means 15.
type logTicks struct{ maxLabels int }

// Ticks implements plot.Ticker.
func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	limit := t.maxLabels
	if limit == 0 {
		limit = 15
	}
	type mark struct {
		v    float64
		mult int
	}
	var marks []mark
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi*(1+1e-9); e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow(10, e)
			if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				marks = append(marks, mark{v, m})
			}
		}
	}
	labelled := func(mults ...int) int {
		n := 0
		for _, mk := range marks {
			if slices.Contains(mults, mk.mult) {
				n++
			}
		}
		return n
	}
	var mults []int
	for _, try := range [][]int{{1, 2, 5}, {1, 3}, {1}} {
		mults = try
		if labelled(try...) <= limit {
			break
		}
	}
	all := labelled(mults...) < 2
	ticks := make([]plot.Tick, 0, len(marks))
	for _, mk := range marks {
		tk := plot.Tick{Value: mk.v}
		if all || slices.Contains(mults, mk.mult) {
			tk.Label = compactNum(mk.v)
		}
		ticks = append(ticks, tk)
	}
	if all && len(marks) < 2 {
		// A range within one decade step: label its ends as well.
		ticks = append(ticks, plot.Tick{Value: lo, Label: compactNum(lo)}, plot.Tick{Value: hi, Label: compactNum(hi)})
	}
	return ticks
}

// logAxis marks an axis that shows log10 of the data on a linear scale:
// the figures plot lg(v) rather than use plot.LogScale, whose axis label
// gonum sizes at the linear midpoint of the range, which shrinks the data
// area of a log axis spanning decades. Its ticks are logTicks, placed at
// lg of their values.
type logAxis struct{ logTicks }

// Ticks implements plot.Ticker.
func (t logAxis) Ticks(lo, hi float64) []plot.Tick {
	ticks := t.logTicks.Ticks(math.Pow(10, lo), math.Pow(10, hi))
	for i := range ticks {
		ticks[i].Value = lg(ticks[i].Value)
	}
	return ticks
}

// lg is the position of v on a logAxis.
func lg(v float64) float64 { return math.Log10(v) }

// compactNum writes a tick value short: 500, 1k, 2.5k, 10k, 1M, 0.2.
func compactNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return fixed(v/1e6, 1, true) + "M"
	case a >= 1e3:
		return fixed(v/1e3, 1, true) + "k"
	case a >= 1:
		return fixed(v, 0, false)
	}
	return fixed(v, 3, true)
}

// logRange sets a logAxis to span lo..hi, both above zero, widening a
// range of one value to a factor of two either side.
func logRange(a *plot.Axis, lo, hi float64) {
	if lo >= hi {
		lo, hi = lo/2, hi*2
	}
	a.Min, a.Max = lg(lo), lg(hi)
}

// fitTop returns the top of a linear axis from 0 for data up to top: a
// little above it, so the highest point does not sit on the frame.
func fitTop(top float64) float64 {
	if top <= 0 {
		return 1
	}
	return top * 1.06
}

// strategyColor is strategy i's colour, the same in every figure.
func strategyColor(i int) color.Color { return plotutil.Color(i) }

var (
	limitColor  = color.RGBA{R: 200, G: 30, B: 30, A: 255}
	failColor   = color.RGBA{R: 205, G: 60, B: 50, A: 255}
	kneeColor   = color.Gray{Y: 90}
	chosenCol   = color.RGBA{G: 140, B: 60, A: 255}
	shadeColor  = color.RGBA{R: 250, G: 215, B: 210, A: 255}
	neutralGray = color.Gray{Y: 150}
	dashed      = []vg.Length{vg.Points(6), vg.Points(3)}
	dotted      = []vg.Length{vg.Points(2), vg.Points(2)}
)

// line returns a line through xys in the given colour, width 1.5 pt.
func line(xys plotter.XYs, c color.Color, dashes []vg.Length) (*plotter.Line, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(1.5), dashes
	return l, nil
}

// hline returns a horizontal line at y from x0 to x1.
func hline(y, x0, x1 float64, c color.Color, dashes []vg.Length) (*plotter.Line, error) {
	return line(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}}, c, dashes)
}

// vline returns a vertical line at x from y0 to y1.
func vline(x, y0, y1 float64, c color.Color, dashes []vg.Length) (*plotter.Line, error) {
	return line(plotter.XYs{{X: x, Y: y0}, {X: x, Y: y1}}, c, dashes)
}

// latencyCDF draws, per strategy, the share of turns answered within a
// time: the answer CDF, which levels off below 1 for a strategy that failed
// turns. Results written before the answer CDF existed fall back to the
// turn-latency CDF of every finished turn. Dotted lines at 0.5 and 0.95
// let a reader take p50 and p95 off the curves.
func latencyCDF(r *results.Results, _ Options) (*Figure, error) {
	name, figTitle := "latency-cdf", "Turn latency CDF"
	caption := "Read each strategy's p50 and p95 where its line crosses the dotted 0.5 and 0.95 lines; further left is faster."
	points := func(s *results.StrategyResult) []results.CDFPoint { return s.LatencyCDF }
	title, xLabel, yLabel := "Turn latency, cumulative", "turn latency (ms, log scale)", "share of turns finished"
	if slices.ContainsFunc(r.Strategies, func(s results.StrategyResult) bool { return len(s.AnswerCDF) > 0 }) {
		figTitle = "Turn latency CDF: turns answered within a time"
		caption = "Read p50 and p95 where each line crosses the dotted 0.5 and 0.95 lines; a line that levels off below 1 failed that share of its turns, which count as never answered."
		points = func(s *results.StrategyResult) []results.CDFPoint { return s.AnswerCDF }
		title, xLabel, yLabel = "Turns answered, cumulative", "time to answer (ms, log scale)", "share of turns answered"
	}
	p := newPlot(title, xLabel, yLabel)
	p.X.Tick.Marker = logAxis{}
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
				xys = append(xys, plotter.XY{X: lg(c.Ms), Y: c.P})
				lo, hi = min(lo, c.Ms), max(hi, c.Ms)
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, err := line(xys, strategyColor(i), plotutil.Dashes(i/len(plotutil.DefaultColors)))
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
	logRange(&p.X, lo, hi)
	for _, q := range []float64{0.5, 0.95} {
		l, err := hline(q, p.X.Min, p.X.Max, color.Gray{Y: 110}, dotted)
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
	return newFigure(name, figTitle, caption, figureHeight, p), nil
}

// guide is the legend thumbnail of the CDF's dotted percentile lines.
type guide struct{}

// Thumbnail implements plot.Thumbnailer.
func (guide) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(draw.LineStyle{Color: color.Gray{Y: 110}, Width: vg.Points(1), Dashes: dotted}, c.Min.X, y, c.Max.X, y)
}

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

// panelsHeight is the height of a figure with n stacked panels.
func panelsHeight(n int) vg.Length {
	return max(figureHeight, vg.Length(n)*panelHeight)
}

func inFlight(r *results.Results, opts Options) (*Figure, error) {
	t0, t1, ok := timelineSpan(r)
	if !ok {
		return nil, nil
	}
	lim := opts.limits(r)
	bands := eventBands(r, "", t0, t1)
	var panels []*plot.Plot
	for i, s := range r.Strategies {
		title := s.Name + " (no cap)"
		if s.MaxInFlight > 0 {
			title = fmt.Sprintf("%s (cap %d)", s.Name, s.MaxInFlight)
		}
		p := newPlot(title, "time (s)", "attempts in flight")
		p.X.Min, p.X.Max = t0, t1
		shadeEvents(p, bands)
		top := 0.0
		xys := make(plotter.XYs, len(s.Timeline))
		for k, pt := range s.Timeline {
			xys[k] = plotter.XY{X: pt.T, Y: float64(pt.InFlight)}
			top = max(top, float64(pt.InFlight))
		}
		if len(xys) > 0 {
			l, err := line(Downsample(xys, opts.maxPoints()), strategyColor(i), nil)
			if err != nil {
				return nil, fmt.Errorf("reports: in flight of %s: %w", s.Name, err)
			}
			p.Add(l)
			p.Legend.Add("in flight (peak per bucket)", l)
		}
		if s.MaxInFlight > 0 {
			l, err := hline(float64(s.MaxInFlight), t0, t1, color.Black, dashed)
			if err != nil {
				return nil, err
			}
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("cap %d", s.MaxInFlight), l)
			top = max(top, float64(s.MaxInFlight))
		}
		if lim.inFlight > 0 {
			l, err := hline(float64(lim.inFlight), t0, t1, limitColor, dotted)
			if err != nil {
				return nil, err
			}
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("service limit %d", lim.inFlight), l)
			top = max(top, float64(lim.inFlight))
		}
		p.Y.Min, p.Y.Max = 0, fitTop(top)
		if i == 0 {
			labelEvents(p, bands)
		}
		panels = append(panels, p)
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

func requestRate(r *results.Results, opts Options) (*Figure, error) {
	t0, t1, ok := timelineSpan(r)
	if !ok {
		return nil, nil
	}
	lim := opts.limits(r)
	bands := eventBands(r, "", t0, t1)
	var panels []*plot.Plot
	for i, s := range r.Strategies {
		p := newPlot(s.Name, "time (s)", "requests/s")
		p.X.Min, p.X.Max = t0, t1
		shadeEvents(p, bands)
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
		if lim.ratePerS > 0 {
			top = max(top, lim.ratePerS)
		}
		p.Y.Min, p.Y.Max = 0, fitTop(top)
		if len(s.Timeline) > 0 {
			shade := spans(s.Timeline, saturated(s.Timeline, lim.ratePerS), (t1-t0)/300)
			if len(shade) > 0 {
				b := &rects{fill: shadeColor}
				for _, sp := range shade {
					b.add(sp[0], sp[1], p.Y.Min, p.Y.Max)
				}
				p.Add(b)
				p.Legend.Add("limit saturated", b)
			}
		}
		if lim.ratePerS > 0 {
			// Under the lines, so an admitted rate at the limit shows.
			l, err := hline(lim.ratePerS, t0, t1, color.Black, dashed)
			if err != nil {
				return nil, err
			}
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("limit %s/s", num(lim.ratePerS)), l)
		}
		if len(s.Timeline) > 0 {
			series := []struct {
				xys    plotter.XYs
				label  string
				col    color.Color
				dashes []vg.Length
				width  vg.Length
				skip   bool
			}{
				{admitted, "admitted/s", color.Gray{Y: 40}, nil, 1, !any429},
				{limited, "429s/s", limitColor, nil, 1, !any429},
				{started, "started/s", strategyColor(i), nil, 1.5, false},
			}
			for _, sr := range series {
				if sr.skip {
					continue
				}
				l, err := line(Downsample(sr.xys, opts.maxPoints()), sr.col, sr.dashes)
				if err != nil {
					return nil, fmt.Errorf("reports: requests/s of %s: %w", s.Name, err)
				}
				l.Width = vg.Points(float64(sr.width))
				p.Add(l)
				p.Legend.Add(sr.label, l)
			}
		}
		if i == 0 {
			labelEvents(p, bands)
		}
		panels = append(panels, p)
	}
	return newFigure("requests", "Requests per second against the limit",
		"Where a strategy's admitted line meets the limit the band is shaded (the limit is saturated); the gap between started and admitted is the 429s.",
		panelsHeight(len(panels)), panels...), nil
}
