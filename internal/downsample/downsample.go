// Package downsample bounds a series of points for plots and results
// without losing its peaks: the one algorithm behind reports.Downsample and
// the simulator's adaptive limit traces.
package downsample

// MinMax reduces pts, in order along the x axis, to at most maxPoints
// points without losing peaks: it keeps the first and the last point and
// splits the rest into (maxPoints−2)/2 buckets of consecutive points,
// keeping each bucket's lowest and highest point by y, in their original
// order. Every peak and trough that is the extreme of its bucket survives,
// in particular the global maximum and minimum; the points kept are points
// of pts, so a step series keeps real steps. A series that already fits,
// or a maxPoints below 4, comes back as a copy of pts unchanged. On equal
// values the first point of a bucket wins.
func MinMax[T any](pts []T, maxPoints int, y func(*T) float64) []T {
	if len(pts) <= maxPoints || maxPoints < 4 {
		return append([]T(nil), pts...)
	}
	inner := len(pts) - 2
	buckets := (maxPoints - 2) / 2
	out := make([]T, 0, maxPoints)
	out = append(out, pts[0])
	for b := range buckets {
		lo, hi := 1+b*inner/buckets, 1+(b+1)*inner/buckets
		if lo >= hi {
			continue
		}
		iMin, iMax := lo, lo
		yMin, yMax := y(&pts[lo]), y(&pts[lo])
		for i := lo + 1; i < hi; i++ {
			v := y(&pts[i])
			if v < yMin {
				iMin, yMin = i, v
			}
			if v > yMax {
				iMax, yMax = i, v
			}
		}
		switch {
		case iMin == iMax:
			out = append(out, pts[iMin])
		case iMin < iMax:
			out = append(out, pts[iMin], pts[iMax])
		default:
			out = append(out, pts[iMax], pts[iMin])
		}
	}
	return append(out, pts[len(pts)-1])
}
