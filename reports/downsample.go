package reports

import (
	"gonum.org/v1/plot/plotter"

	"github.com/simbench/simbench/internal/downsample"
)

// DefaultMaxPoints is how many points a timeline line keeps at most when
// Options.MaxPoints is zero: enough for 800 pixels of width.
const DefaultMaxPoints = 800

// Downsample reduces xys, ordered by X, to at most maxPoints points without
// losing peaks: it keeps the first and the last point and splits the rest
// into (maxPoints−2)/2 buckets of consecutive points, keeping each bucket's
// lowest and highest point in their original order. Every peak and trough
// that is the extreme of its bucket survives, in particular the global
// maximum and minimum. A series that already fits, or a maxPoints below 4,
// comes back as a copy of xys unchanged.
func Downsample(xys plotter.XYs, maxPoints int) plotter.XYs {
	return downsample.MinMax(xys, maxPoints, func(p *plotter.XY) float64 { return p.Y })
}
