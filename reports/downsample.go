package reports

import "gonum.org/v1/plot/plotter"

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
	if len(xys) <= maxPoints || maxPoints < 4 {
		return append(plotter.XYs(nil), xys...)
	}
	inner := len(xys) - 2
	buckets := (maxPoints - 2) / 2
	out := make(plotter.XYs, 0, maxPoints)
	out = append(out, xys[0])
	for b := range buckets {
		lo, hi := 1+b*inner/buckets, 1+(b+1)*inner/buckets
		if lo >= hi {
			continue
		}
		iMin, iMax := lo, lo
		for i := lo + 1; i < hi; i++ {
			if xys[i].Y < xys[iMin].Y {
				iMin = i
			}
			if xys[i].Y > xys[iMax].Y {
				iMax = i
			}
		}
		switch {
		case iMin == iMax:
			out = append(out, xys[iMin])
		case iMin < iMax:
			out = append(out, xys[iMin], xys[iMax])
		default:
			out = append(out, xys[iMax], xys[iMin])
		}
	}
	return append(out, xys[len(xys)-1])
}
