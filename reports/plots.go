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

	"github.com/simbench/simbench/sim"
)

// Figure sizes: 600 pt is 800 px at the PNG's 96 dpi.
const (
	figureWidth  = 600 * vg.Inch / 72
	figureHeight = 360 * vg.Inch / 72
	panelHeight  = 190 * vg.Inch / 72
	// panelData is roughly a panel's data area, without title and X axis.
	panelData = panelHeight - 75
	pngDPI    = 96
)

// Options tune the plots and the HTML report. The zero value draws every
// plot the results allow, with the defaults.
type Options struct {
	// RateLimitPerS is the service's request limit in requests per second,
	// drawn on the requests-per-second plot (0: no line).
	RateLimitPerS float64
	// ConcurrencyLimit is the service's limit on requests in flight, drawn
	// on the in-flight plot (0: no line).
	ConcurrencyLimit int
	// Sweep holds one strategy's results over a range of caps; when not
	// empty the sweep plot is drawn, with the knee and the chosen cap marked.
	Sweep []SweepPoint
	// SweepStrategy names the strategy the sweep varied, for titles.
	SweepStrategy string
	// MaxRateLimitedShare is the 429 share ChooseCap accepts for the sweep's
	// chosen cap; 0 means DefaultMaxRateLimitedShare.
	MaxRateLimitedShare float64
	// MaxPoints bounds the points of each timeline line (see Downsample);
	// 0 means DefaultMaxPoints.
	MaxPoints int
	// Plans are the recommendation arithmetic to show in the HTML report,
	// one per service.
	Plans []Plan
}

func (o Options) maxPoints() int {
	if o.MaxPoints == 0 {
		return DefaultMaxPoints
	}
	return o.MaxPoints
}

func (o Options) maxShare() float64 {
	if o.MaxRateLimitedShare == 0 {
		return DefaultMaxRateLimitedShare
	}
	return o.MaxRateLimitedShare
}

// Figure is one plot, ready to render as SVG or PNG. Rendering the same
// figure twice gives the same bytes.
type Figure struct {
	// Name is the file name without extension, such as "latency-cdf".
	Name string
	// Title is the figure's heading; Caption says what to read from it.
	Title, Caption string
	w, h           vg.Length
	plots          [][]*plot.Plot // rows of tiles; one tile for most figures
}

// Size returns the figure's width and height in points (1/72 inch).
func (f Figure) Size() (w, h vg.Length) { return f.w, f.h }

func (f Figure) draw(c vg.CanvasSizer) {
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	rows, cols := len(f.plots), len(f.plots[0])
	if rows == 1 && cols == 1 {
		f.plots[0][0].Draw(dc)
		return
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadTop: 4, PadBottom: 4, PadLeft: 4, PadRight: 8, PadX: 16, PadY: 10}
	canvases := plot.Align(f.plots, tiles, dc)
	for i := range f.plots {
		for j := range f.plots[i] {
			f.plots[i][j].Draw(canvases[i][j])
		}
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
// latency CDF, in flight over time, requests per second over time,
// attempts per call, backoff comparison, and the sweep. A figure whose data
// is missing from the results (no timeline, say) is left out.
func Figures(r *sim.Results, opts Options) ([]Figure, error) {
	if r == nil {
		return nil, errors.New("reports: no results")
	}
	builders := []func(*sim.Results, Options) (*Figure, error){
		latencyCDF, inFlight, requestRate, attemptsHistogram, backoffComparison, sweepFigure,
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
func WritePlots(dir string, r *sim.Results, opts Options) ([]string, error) {
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
	p.X.Tick.Marker = numTicks{plot.DefaultTicks{}}
	p.Y.Tick.Marker = numTicks{plot.DefaultTicks{}}
	p.Legend.TextStyle.Font = sans(10)
	p.Legend.Top = true
	p.Legend.ThumbnailWidth = 18
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	p.Add(g)
	return p
}

// numTicks relabels another ticker's labelled ticks the way the tables
// write numbers: "10,000" and "25", not "1e+04" and "25.00".
type numTicks struct{ plot.Ticker }

// Ticks implements plot.Ticker.
func (t numTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := t.Ticker.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = fixed(ticks[i].Value, 3, true)
		}
	}
	return ticks
}

// legendEntryHeight is the vertical space one legend entry takes.
const legendEntryHeight = 13

// roomForLegend raises the top of p's linear Y axis so that data reaching
// up to top stays below a legend of the given number of entries, on a plot
// whose data area is about dataHeight tall.
func roomForLegend(p *plot.Plot, top float64, entries int, dataHeight vg.Length) {
	if top <= p.Y.Min {
		top = p.Y.Min + 1
	}
	frac := min(0.6, float64(vg.Length(entries)*legendEntryHeight+6)/float64(dataHeight))
	p.Y.Max = p.Y.Min + (top-p.Y.Min)/(1-frac)
}

// logRange sets a log axis to span lo..hi, both above zero, widening a
// range of one value (which gonum would widen to include 0 and then refuse
// on a log scale) to a factor of two either side.
func logRange(a *plot.Axis, lo, hi float64) {
	if lo >= hi {
		lo, hi = lo/2, hi*2
	}
	a.Min, a.Max = lo, hi
}

// strategyColor is strategy i's colour, the same in every figure.
func strategyColor(i int) color.Color { return plotutil.Color(i) }

var (
	limitColor = color.RGBA{R: 200, G: 30, B: 30, A: 255}
	kneeColor  = color.Gray{Y: 90}
	chosenCol  = color.RGBA{G: 140, B: 60, A: 255}
	dashed     = []vg.Length{vg.Points(6), vg.Points(3)}
	dotted     = []vg.Length{vg.Points(2), vg.Points(2)}
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
// turn-latency CDF of every finished turn.
func latencyCDF(r *sim.Results, _ Options) (*Figure, error) {
	fig := &Figure{
		Name: "latency-cdf", Title: "Turn latency CDF",
		Caption: "Share of turns finished within a latency, one line per strategy; further left and steeper is better.",
	}
	points := func(s *sim.StrategyResult) []sim.CDFPoint { return s.LatencyCDF }
	title, xLabel, yLabel := "Turn latency, cumulative", "turn latency (ms, log scale)", "share of turns finished"
	if slices.ContainsFunc(r.Strategies, func(s sim.StrategyResult) bool { return len(s.AnswerCDF) > 0 }) {
		fig.Title = "Turn latency CDF: turns answered within a time"
		fig.Caption = "Share of the turns begun that got a full answer within a time, one line per strategy. " +
			"A failed turn is never answered, so a strategy that fails turns levels off below 1; further left, steeper and higher is better."
		points = func(s *sim.StrategyResult) []sim.CDFPoint { return s.AnswerCDF }
		title, xLabel, yLabel = "Turns answered, cumulative", "time to answer (ms, log scale)", "share of turns answered"
	}
	p := newPlot(title, xLabel, yLabel)
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = numTicks{plot.LogTicks{Prec: -1}}
	p.Legend.Left = true
	p.Y.Min, p.Y.Max = 0, 1
	drawn := false
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range r.Strategies {
		s := &r.Strategies[i]
		var xys plotter.XYs
		for _, c := range points(s) {
			if c.Ms > 0 { // a log axis has no place for 0
				xys = append(xys, plotter.XY{X: c.Ms, Y: c.P})
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
		p.Add(l)
		p.Legend.Add(s.Name, l)
		drawn = true
	}
	if !drawn {
		return nil, nil
	}
	logRange(&p.X, lo, hi)
	fig.w, fig.h, fig.plots = figureWidth, figureHeight, [][]*plot.Plot{{p}}
	return fig, nil
}

// timelineSpan returns the time range covered by all strategies' timelines, in s.
func timelineSpan(r *sim.Results) (t0, t1 float64, ok bool) {
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

func inFlight(r *sim.Results, opts Options) (*Figure, error) {
	t0, t1, ok := timelineSpan(r)
	if !ok {
		return nil, nil
	}
	var rows [][]*plot.Plot
	for i, s := range r.Strategies {
		title := s.Name + " (no cap)"
		if s.MaxInFlight > 0 {
			title = fmt.Sprintf("%s (cap %d)", s.Name, s.MaxInFlight)
		}
		p := newPlot(title, "time (s)", "attempts in flight")
		p.X.Min, p.X.Max = t0, t1
		p.Y.Min = 0
		entries := 0
		xys := make(plotter.XYs, len(s.Timeline))
		for k, pt := range s.Timeline {
			xys[k] = plotter.XY{X: pt.T, Y: float64(pt.InFlight)}
		}
		if len(xys) > 0 {
			l, err := line(Downsample(xys, opts.maxPoints()), strategyColor(i), nil)
			if err != nil {
				return nil, fmt.Errorf("reports: in flight of %s: %w", s.Name, err)
			}
			p.Add(l)
			p.Legend.Add("in flight (peak per bucket)", l)
			entries++
		}
		if s.MaxInFlight > 0 {
			l, err := hline(float64(s.MaxInFlight), t0, t1, color.Black, dashed)
			if err != nil {
				return nil, err
			}
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("cap %d", s.MaxInFlight), l)
			entries++
		}
		if opts.ConcurrencyLimit > 0 {
			l, err := hline(float64(opts.ConcurrencyLimit), t0, t1, limitColor, dotted)
			if err != nil {
				return nil, err
			}
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("service limit %d", opts.ConcurrencyLimit), l)
			entries++
		}
		roomForLegend(p, p.Y.Max, entries, panelData)
		rows = append(rows, []*plot.Plot{p})
	}
	return &Figure{
		Name: "in-flight", Title: "In flight over time",
		Caption: "Largest number of attempts in flight per time bucket, one panel per strategy, with the strategy's cap and the service's limit.",
		w:       figureWidth, h: panelsHeight(len(rows)), plots: rows,
	}, nil
}

func requestRate(r *sim.Results, opts Options) (*Figure, error) {
	t0, t1, ok := timelineSpan(r)
	if !ok {
		return nil, nil
	}
	var rows [][]*plot.Plot
	for i, s := range r.Strategies {
		p := newPlot(s.Name, "time (s)", "requests/s")
		p.X.Min, p.X.Max = t0, t1
		p.Y.Min = 0
		entries := 0
		started := make(plotter.XYs, len(s.Timeline))
		var limited plotter.XYs
		for k, pt := range s.Timeline {
			started[k] = plotter.XY{X: pt.T, Y: pt.Started}
			if pt.RateLimited > 0 {
				limited = append(limited, plotter.XY{X: pt.T, Y: pt.RateLimited})
			}
		}
		if len(started) > 0 {
			l, err := line(Downsample(started, opts.maxPoints()), strategyColor(i), nil)
			if err != nil {
				return nil, fmt.Errorf("reports: requests/s of %s: %w", s.Name, err)
			}
			p.Add(l)
			p.Legend.Add("attempts started/s", l)
			entries++
		}
		if len(limited) > 0 {
			sc, err := plotter.NewScatter(Downsample(limited, opts.maxPoints()))
			if err != nil {
				return nil, fmt.Errorf("reports: 429s of %s: %w", s.Name, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: limitColor, Radius: vg.Points(2), Shape: draw.CrossGlyph{}}
			p.Add(sc)
			p.Legend.Add("429s/s", sc)
			entries++
		}
		if opts.RateLimitPerS > 0 {
			l, err := hline(opts.RateLimitPerS, t0, t1, color.Black, dashed)
			if err != nil {
				return nil, err
			}
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("limit %s/s", num(opts.RateLimitPerS)), l)
			entries++
		}
		roomForLegend(p, p.Y.Max, entries, panelData)
		rows = append(rows, []*plot.Plot{p})
	}
	return &Figure{
		Name: "requests", Title: "Requests per second against the limit",
		Caption: "Attempts started per second, one panel per strategy, against the rate limit; crosses mark 429 responses per second.",
		w:       figureWidth, h: panelsHeight(len(rows)), plots: rows,
	}, nil
}

func attemptsHistogram(r *sim.Results, _ Options) (*Figure, error) {
	p := newPlot("Attempts per call", "attempts a call took", "calls (log scale)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = numTicks{plot.LogTicks{Prec: -1}}
	most := 0
	drawn := false
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range r.Strategies {
		var xys plotter.XYs
		for k, n := range s.AttemptsPerCall {
			if n > 0 { // a log axis has no place for 0
				xys = append(xys, plotter.XY{X: float64(k + 1), Y: float64(n)})
				lo, hi = min(lo, float64(n)), max(hi, float64(n))
			}
		}
		if len(xys) == 0 {
			continue
		}
		most = max(most, len(s.AttemptsPerCall))
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("reports: attempts of %s: %w", s.Name, err)
		}
		l.Color, l.Width = strategyColor(i), vg.Points(1.5)
		sc.Color, sc.Shape, sc.Radius = strategyColor(i), plotutil.Shape(i), vg.Points(3)
		p.Add(l, sc)
		p.Legend.Add(s.Name, l, sc)
		drawn = true
	}
	if !drawn {
		return nil, nil
	}
	var ticks plot.ConstantTicks
	for k := 1; k <= most; k++ {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: fmt.Sprint(k)})
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = 0.5, float64(most)+0.5
	logRange(&p.Y, lo, hi)
	return &Figure{
		Name: "attempts", Title: "Attempts per call",
		Caption: "How many calls needed 1, 2, 3, … attempts (a histogram, log scale); every attempt past the first is a retry.",
		w:       figureWidth, h: figureHeight, plots: [][]*plot.Plot{{p}},
	}, nil
}

// groupedBars adds one horizontal bar series per entry of series to p,
// grouped around each strategy's row; the first strategy is the top row,
// the first series the top bar of each group.
func groupedBars(p *plot.Plot, names []string, series []plotter.Values, labels []string, colors []color.Color) error {
	const barW = 12
	n := len(series)
	rows := len(names)
	top := 0.0
	for k, vs := range series {
		rev := make(plotter.Values, rows)
		for i, v := range vs {
			rev[rows-1-i] = v
			top = max(top, v)
		}
		bc, err := plotter.NewBarChart(rev, vg.Points(barW))
		if err != nil {
			return err
		}
		bc.Color = colors[k]
		bc.LineStyle.Width = 0
		bc.Horizontal = true
		bc.Offset = vg.Points(barW * (float64(n-1)/2 - float64(k)))
		p.Add(bc)
		p.Legend.Add(labels[k], bc)
	}
	rev := make([]string, rows)
	for i, name := range names {
		rev[rows-1-i] = name
	}
	p.NominalY(rev...)
	p.Y.Label.Text = ""
	p.X.Min = 0
	// Leave the right quarter to the legend.
	p.X.Max = max(top, 1) / 0.72
	return nil
}

func backoffComparison(r *sim.Results, _ Options) (*Figure, error) {
	if len(r.Strategies) == 0 {
		return nil, nil
	}
	names := make([]string, len(r.Strategies))
	calls := make(plotter.Values, len(r.Strategies))
	attempts := make(plotter.Values, len(r.Strategies))
	p50 := make(plotter.Values, len(r.Strategies))
	p95 := make(plotter.Values, len(r.Strategies))
	for i, s := range r.Strategies {
		names[i] = s.Name
		calls[i], attempts[i] = float64(s.Calls), float64(s.Attempts)
		p50[i], p95[i] = s.TurnLatencyMs.P50/1000, s.TurnLatencyMs.P95/1000
	}
	callsPlot := newPlot("Calls made", "calls", "")
	if err := groupedBars(callsPlot, names, []plotter.Values{calls, attempts},
		[]string{"calls completed", "attempts sent"},
		[]color.Color{color.RGBA{R: 70, G: 110, B: 180, A: 255}, color.RGBA{R: 230, G: 140, B: 40, A: 255}}); err != nil {
		return nil, fmt.Errorf("reports: calls bars: %w", err)
	}
	timePlot := newPlot("Completion time", "turn latency (s)", "")
	if err := groupedBars(timePlot, names, []plotter.Values{p50, p95},
		[]string{"p50", "p95"},
		[]color.Color{color.RGBA{R: 120, G: 170, B: 120, A: 255}, color.RGBA{R: 40, G: 100, B: 50, A: 255}}); err != nil {
		return nil, fmt.Errorf("reports: latency bars: %w", err)
	}
	panel := 75 + vg.Length(len(names))*36
	return &Figure{
		Name: "backoff", Title: "Backoff comparison",
		Caption: "Calls completed against attempts sent (the gap is retries), and how long turns took, per strategy.",
		w:       figureWidth, h: max(figureHeight, 2*panel), plots: [][]*plot.Plot{{callsPlot}, {timePlot}},
	}, nil
}

// capAxis sets p's X axis for caps c0..c1: logarithmic when they span a
// factor of 8 or more, with a tick at each cap when there are few.
func capAxis(p *plot.Plot, pts []SweepPoint, c0, c1 float64) {
	p.X.Min, p.X.Max = c0, c1
	logScale := c0 > 0 && c1/c0 >= 8
	if logScale {
		p.X.Scale = plot.LogScale{}
		p.X.Min, p.X.Max = c0/1.15, c1*1.15
	}
	var ticks plot.ConstantTicks
	var last int
	for _, pt := range pts {
		if pt.Cap != last && len(pts) <= 12 {
			ticks = append(ticks, plot.Tick{Value: float64(pt.Cap), Label: fmt.Sprint(pt.Cap)})
		}
		last = pt.Cap
	}
	switch {
	case ticks != nil:
		p.X.Tick.Marker = ticks
	case logScale:
		p.X.Tick.Marker = numTicks{plot.LogTicks{Prec: -1}}
	}
}

func sweepFigure(r *sim.Results, opts Options) (*Figure, error) {
	if len(opts.Sweep) == 0 {
		return nil, nil
	}
	pts := sortedByCap(opts.Sweep)
	if pts[0].Cap < 1 {
		return nil, fmt.Errorf("reports: sweep point with cap %d; caps start at 1", pts[0].Cap)
	}
	c0, c1 := float64(pts[0].Cap), float64(pts[len(pts)-1].Cap)
	if c0 == c1 {
		c0, c1 = c0/2, c1*2
	}
	// A cap whose percentile fell among unanswered turns has no point on
	// the latency curves.
	series := func(f func(SweepPoint) float64) plotter.XYs {
		xys := make(plotter.XYs, 0, len(pts))
		for _, p := range pts {
			if y := f(p); !math.IsInf(y, 0) {
				xys = append(xys, plotter.XY{X: float64(p.Cap), Y: y})
			}
		}
		return xys
	}
	who := opts.SweepStrategy
	if who == "" {
		who = "sweep"
	}
	lat := newPlot(who+": time to answer against cap", "max in flight", "time to answer (ms; failed turns unanswered)")
	good := newPlot("Goodput against cap", "max in flight", "successful calls/s")
	share := newPlot("Rate-limited share against cap", "max in flight", "429s per attempt (%)")
	curves := []struct {
		p     *plot.Plot
		label string
		xys   plotter.XYs
		col   color.Color
	}{
		{lat, "p50", series(func(p SweepPoint) float64 { return float64(p.P50Ms) }), strategyColor(2)},
		{lat, "p95", series(func(p SweepPoint) float64 { return float64(p.P95Ms) }), strategyColor(3)},
		{good, "goodput", series(func(p SweepPoint) float64 { return p.GoodputPerS }), strategyColor(1)},
		{share, "429 share", series(func(p SweepPoint) float64 { return 100 * p.RateLimitedShare }), limitColor},
	}
	top := map[*plot.Plot]float64{}
	entries := map[*plot.Plot]int{}
	for _, c := range curves {
		for _, xy := range c.xys {
			top[c.p] = max(top[c.p], xy.Y)
		}
		l, sc, err := plotter.NewLinePoints(c.xys)
		if err != nil {
			return nil, fmt.Errorf("reports: sweep %s: %w", c.label, err)
		}
		l.Color, l.Width = c.col, vg.Points(1.5)
		sc.Color, sc.Radius = c.col, vg.Points(2.5)
		c.p.Add(l, sc)
		c.p.Legend.Add(c.label, l, sc)
		entries[c.p]++
	}
	threshold := 100 * opts.maxShare()
	l, err := hline(threshold, c0, c1, color.Black, dotted)
	if err != nil {
		return nil, err
	}
	share.Add(l)
	share.Legend.Add(fmt.Sprintf("threshold %s%%", num(threshold)), l)
	entries[share]++
	top[share] = max(top[share], threshold)

	knee, hasKnee := Knee(pts)
	chosen, hasChosen := ChooseCap(pts, opts.maxShare())
	for _, p := range []*plot.Plot{lat, good, share} {
		capAxis(p, pts, c0, c1)
		p.Y.Min = 0
		n := entries[p]
		if hasKnee {
			n++
		}
		if hasChosen {
			n++
		}
		roomForLegend(p, top[p], n, panelData)
		if hasKnee {
			l, err := vline(float64(knee), 0, p.Y.Max, kneeColor, dotted)
			if err != nil {
				return nil, err
			}
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("knee %d", knee), l)
		}
		if hasChosen {
			l, err := vline(float64(chosen), 0, p.Y.Max, chosenCol, dashed)
			if err != nil {
				return nil, err
			}
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("chosen %d", chosen), l)
		}
	}
	return &Figure{
		Name: "sweep", Title: "Sweep over the concurrency cap",
		Caption: "Turn latency, goodput and the share of attempts answered 429 against the cap; the knee is where more concurrency stops buying goodput, the chosen cap has the lowest p95 within the 429 threshold.",
		w:       figureWidth, h: panelsHeight(3), plots: [][]*plot.Plot{{lat}, {good}, {share}},
	}, nil
}

func sortedByCap(points []SweepPoint) []SweepPoint {
	pts := slices.Clone(points)
	slices.SortStableFunc(pts, func(a, b SweepPoint) int { return a.Cap - b.Cap })
	return pts
}
