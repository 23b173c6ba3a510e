// Package plots is the house style of the reports' figures (gonum/plot):
// fonts, colours, dash patterns, lines and axes, the same in every figure.
package plots

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Sans is the font of every plot text: Liberation Sans, which gonum embeds
// for PNGs; SVG viewers fall back to their own sans-serif.
func Sans(size vg.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

// NewPlot returns a plot with the report's fonts, a grid and the given
// title and axis labels (units included in the labels).
func NewPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = Sans(13)
	p.Title.Padding = 6
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = Sans(11)
		a.Tick.Label.Font = Sans(10)
	}
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.X.Tick.Marker = LinTicks{}
	p.Y.Tick.Marker = LinTicks{}
	p.Legend.TextStyle.Font = Sans(10)
	p.Legend.ThumbnailWidth = 18
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	p.Add(g)
	return p
}

// StrategyColor is strategy i's colour, the same in every figure.
func StrategyColor(i int) color.Color { return plotutil.Color(i) }

// The figures' colours and dash patterns: limits, failures, successes,
// refusals, the sweep's knee and chosen cap, event bands, neutral marks.
var (
	LimitColor   = color.RGBA{R: 200, G: 30, B: 30, A: 255}
	FailColor    = color.RGBA{R: 205, G: 60, B: 50, A: 255}
	OKColor      = color.RGBA{R: 95, G: 160, B: 110, A: 255}
	RefusedColor = color.RGBA{R: 0, G: 165, B: 175, A: 255} // teal: in no strategy's palette
	KneeColor    = color.Gray{Y: 90}
	ChosenColor  = color.RGBA{G: 140, B: 60, A: 255}
	ShadeColor   = color.RGBA{R: 250, G: 215, B: 210, A: 255}
	NeutralGray  = color.Gray{Y: 150}
	Dashed       = []vg.Length{vg.Points(6), vg.Points(3)}
	Dotted       = []vg.Length{vg.Points(2), vg.Points(2)}
	// paceDots and capDashes draw a level over a line that may sit on it:
	// paceDots' dots are round and spaced, capDashes' gaps wider than its
	// dashes, so the line shows between them.
	PaceDots  = []vg.Length{vg.Points(2), vg.Points(4)}
	CapDashes = []vg.Length{vg.Points(5), vg.Points(7)}
)

// Line returns a line through xys in the given colour, width 1.5 pt.
func Line(xys plotter.XYs, c color.Color, dashes []vg.Length) (*plotter.Line, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(1.5), dashes
	return l, nil
}

// HLine returns a horizontal line at y from x0 to x1.
func HLine(y, x0, x1 float64, c color.Color, dashes []vg.Length) (*plotter.Line, error) {
	return Line(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}}, c, dashes)
}

// VLine returns a vertical line at x from y0 to y1.
func VLine(x, y0, y1 float64, c color.Color, dashes []vg.Length) (*plotter.Line, error) {
	return Line(plotter.XYs{{X: x, Y: y0}, {X: x, Y: y1}}, c, dashes)
}
