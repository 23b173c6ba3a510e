package plots

import (
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Rects is a plotter of filled rectangles given in data coordinates: bars
// (on linear or log axes, from any base) and shaded time spans.
type Rects struct {
	// Fill is the rectangles' colour.
	Fill color.Color
	r    []vg.Rectangle // in data units, not points
}

// Add adds the rectangle x0..x1 × y0..y1, in data units.
func (b *Rects) Add(x0, x1, y0, y1 float64) {
	b.r = append(b.r, vg.Rectangle{Min: vg.Point{X: vg.Length(x0), Y: vg.Length(y0)}, Max: vg.Point{X: vg.Length(x1), Y: vg.Length(y1)}})
}

// Plot implements plot.Plotter.
func (b *Rects) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	c.SetColor(b.Fill)
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
func (b *Rects) Thumbnail(c *draw.Canvas) {
	c.SetColor(b.Fill)
	pad := (c.Max.Y - c.Min.Y) / 6
	r := vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: c.Min.Y + pad}, Max: vg.Point{X: c.Max.X, Y: c.Max.Y - pad}}
	c.Fill(r.Path())
}

// ScaleTop returns the top of a y axis for values vs that must also show
// floor (a limit or cap drawn on the same panel; 0 for none): their
// maximum, unless a few buckets (a start-up burst) rise far above the rest
// and above floor's axis, in which case the axis is set by the 99th
// percentile (or floor) and the spike is returned (its value and time) to
// be named instead of flattening every other line. A spike the axis shows
// anyway is not clipped.
func ScaleTop(xys plotter.XYs, floor float64) (top float64, spike plotter.XY, clipped bool) {
	top, spike, clipped = seriesTop(xys)
	top = max(top, floor)
	if clipped && spike.Y <= FitTop(top) {
		return max(spike.Y, floor), spike, false
	}
	return top, spike, clipped
}

// seriesTop is ScaleTop of the values alone.
func seriesTop(xys plotter.XYs) (top float64, spike plotter.XY, clipped bool) {
	if len(xys) == 0 {
		return 0, spike, false
	}
	ys := make([]float64, len(xys))
	for i, p := range xys {
		ys[i] = p.Y
		if p.Y > spike.Y {
			spike = p
		}
	}
	slices.Sort(ys)
	q := ys[min(len(ys)-1, int(math.Ceil(0.99*float64(len(ys))))-1)]
	if len(ys) >= 20 && spike.Y > 2*q && q > 0 {
		return q, spike, true
	}
	return spike.Y, spike, false
}

// LevelLine adds to p a horizontal line at y from x0 to x1 with a legend
// entry, and returns it.
func LevelLine(p *plot.Plot, label string, y, x0, x1 float64, c color.Color, dashes []vg.Length) (*plotter.Line, error) {
	l, err := HLine(y, x0, x1, c, dashes)
	if err != nil {
		return nil, err
	}
	p.Add(l)
	p.Legend.Add(label, l)
	return l, nil
}

// MarkLabel writes text at (x, y) on p in colour c, to the right of x
// (or to its left), aligned vertically by yAlign and offset by dy.
func MarkLabel(p *plot.Plot, x, y float64, s string, c color.Color, right bool, yAlign draw.YAlignment, dy vg.Length) error {
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x, Y: y}}, Labels: []string{s}})
	if err != nil {
		return err
	}
	sty := text.Style{Color: c, Font: Sans(9), Handler: lb.TextStyle[0].Handler, XAlign: draw.XLeft, YAlign: yAlign}
	lb.Offset = vg.Point{X: 3, Y: dy}
	if !right {
		sty.XAlign = draw.XRight
		lb.Offset.X = -3
	}
	lb.TextStyle[0] = sty
	p.Add(lb)
	return nil
}

// Lighter is opaque c at 45% opacity.
func Lighter(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 115}
}
