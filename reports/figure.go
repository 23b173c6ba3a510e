package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"

	"gonum.org/v1/plot"
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
	// maxLegendShare is the most of the figure's width the legends' column
	// may take; wider legends go under their panels, full width, and the
	// figure grows by their height.
	maxLegendShare = 0.3
)

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
	below          bool          // the legends are drawn under their panels
}

// FigureNames are the names of every figure Figures may draw (results'
// plots, results.Plots), each written as NAME.png and NAME.svg: what a
// run's folder may hold from an earlier run that this one did not draw.
var FigureNames = plotNames()

// plotNames lists the names of results' plots, in report order.
func plotNames() []string {
	var out []string
	for _, p := range results.Plots() {
		out = append(out, p.Name)
	}
	return out
}

// Outputs are the names of every file WriteAll may write into a folder,
// relative to it, whichever figures a run draws.
func Outputs() []string {
	out := []string{HTMLFile, MarkdownFile}
	for _, n := range FigureNames {
		out = append(out, n+".png", n+".svg")
	}
	return out
}

// newFigure lays out panels top to bottom, under the title results' plot
// registry gives the figure named name: its VariantTitle when variant is
// set and it has one, else its Title. Each panel's legend moves out of
// its data area into a column on the right of the frames, so that no
// legend covers data.
func newFigure(name string, variant bool, caption string, h vg.Length, panels ...*plot.Plot) *Figure {
	spec, ok := results.Plot(name)
	if !ok {
		panic("reports: no plot " + name + " in results' registry")
	}
	title := spec.Title
	if variant && spec.VariantTitle != "" {
		title = spec.VariantTitle
	}
	f := &Figure{Name: name, Title: title, Caption: caption, w: figureWidth, h: h, plots: panels}
	var widest, tall vg.Length
	for _, p := range panels {
		l := p.Legend
		l.Top, l.Left = true, true
		f.legends = append(f.legends, l)
		p.Legend = plot.NewLegend()
		r := l.Rectangle(draw.Canvas{})
		widest, tall = max(widest, r.Max.X-r.Min.X), tall+r.Max.Y-r.Min.Y+legendGap
	}
	if widest+legendGap > maxLegendShare*figureWidth {
		f.below, f.h = true, f.h+tall
	}
	return f
}

// Size returns the figure's width and height in points (1/72 inch).
func (f Figure) Size() (w, h vg.Length) { return f.w, f.h }

// layout places the panels on dc: each panel's canvas, and the canvas of
// its legend, right of the panel's frame and level with its data area.
func (f Figure) layout(dc draw.Canvas) (panels, legends []draw.Canvas) {
	if f.below {
		return f.layoutBelow(dc)
	}
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

// layoutBelow places the panels full width, each with its legend under
// its frame, level with its data area's left edge.
func (f Figure) layoutBelow(dc draw.Canvas) (panels, legends []draw.Canvas) {
	rows := make([][]*plot.Plot, len(f.plots))
	heights := make([]vg.Length, len(f.plots))
	var total vg.Length
	for i, p := range f.plots {
		rows[i] = []*plot.Plot{p}
		r := f.legends[i].Rectangle(dc)
		heights[i] = r.Max.Y - r.Min.Y + legendGap
		total += heights[i]
	}
	// The panels are aligned in the area above all the legends' strips,
	// then each moved down by the strips of the panels above it: its own
	// strip lies under it.
	tiles := draw.Tiles{Rows: len(rows), Cols: 1, PadTop: 4, PadBottom: 4, PadLeft: 4, PadRight: 8, PadY: 10}
	var above vg.Length
	for i, c := range plot.Align(rows, tiles, draw.Crop(dc, 0, 0, total, 0)) {
		panel := c[0]
		panel.Min.Y -= above
		panel.Max.Y -= above
		above += heights[i]
		panels = append(panels, panel)
		data := f.plots[i].DataCanvas(panel)
		legends = append(legends, draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: data.Min.X, Y: panel.Min.Y - heights[i]},
			Max: vg.Point{X: dc.Max.X - 4, Y: panel.Min.Y - legendGap/2},
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

// pngEncoder compresses at zlib's fastest level: the default level spent
// about 5% of a tier3 run's instructions on five images only report.md
// links, for files a few kilobytes smaller.
var pngEncoder = png.Encoder{CompressionLevel: png.BestSpeed}

// PNG renders the figure as a PNG image at 96 dpi (800 pixels wide),
// compressed at the fastest level (pngEncoder).
func (f Figure) PNG() ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(pngDPI))
	if err := f.render(c); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := pngEncoder.Encode(&b, c.Image()); err != nil {
		return nil, fmt.Errorf("reports: rendering %s as PNG: %w", f.Name, err)
	}
	return b.Bytes(), nil
}

// panelsHeight is the height of a figure with n stacked panels.
func panelsHeight(n int) vg.Length {
	return max(figureHeight, vg.Length(n)*panelHeight)
}
