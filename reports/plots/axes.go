package plots

import (
	"github.com/simbench/simbench/internal/numfmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
)

// LinTicks labels a linear axis at about five round values (1, 2 or 5
// × 10ⁿ apart), written the way the tables write numbers ("10,000", not
// "1e+04"), with an unlabelled mark between labels.
type LinTicks struct{}

// Ticks implements plot.Ticker.
func (LinTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: numfmt.Fixed(lo, 3, true)}}
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
			t.Label = numfmt.Fixed(v, 3, true)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// LogTicks marks a log axis at every 1…9 × 10ⁿ and labels 1, 2 and 5 × 10ⁿ
// (100, 200, 500, 1k, 2k, 5k), so that a reader can place a value within a
// decade. An axis too short for that many labels (more than MaxLabels) is
// labelled at 1 and 3 × 10ⁿ, or 1 × 10ⁿ; one that holds fewer than two of
// them is labelled at every mark. MaxLabels 0 means 15.
type LogTicks struct{ MaxLabels int }

// Ticks implements plot.Ticker.
func (t LogTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	limit := t.MaxLabels
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

// LogAxis marks an axis that shows log10 of the data on a linear scale:
// the figures plot lg(v) rather than use plot.LogScale, whose axis label
// gonum sizes at the linear midpoint of the range, which shrinks the data
// area of a log axis spanning decades. Its ticks are LogTicks, placed at
// Lg of their values.
type LogAxis struct{ LogTicks }

// Ticks implements plot.Ticker.
func (t LogAxis) Ticks(lo, hi float64) []plot.Tick {
	ticks := t.LogTicks.Ticks(math.Pow(10, lo), math.Pow(10, hi))
	for i := range ticks {
		ticks[i].Value = Lg(ticks[i].Value)
	}
	return ticks
}

// Lg is the position of v on a LogAxis.
func Lg(v float64) float64 { return math.Log10(v) }

// compactNum writes a tick value short: 500, 1k, 2.5k, 10k, 1M, 0.2.
func compactNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return numfmt.Fixed(v/1e6, 1, true) + "M"
	case a >= 1e3:
		return numfmt.Fixed(v/1e3, 1, true) + "k"
	case a >= 1:
		return numfmt.Fixed(v, 0, false)
	}
	return numfmt.Fixed(v, 3, true)
}

// LogRange sets a LogAxis to span lo..hi, both above zero, widening a
// range of one value to a factor of two either side.
func LogRange(a *plot.Axis, lo, hi float64) {
	if lo >= hi {
		lo, hi = lo/2, hi*2
	}
	a.Min, a.Max = Lg(lo), Lg(hi)
}

// FitTop returns the top of a linear axis from 0 for data up to top: a
// little above it, so the highest point does not sit on the frame.
func FitTop(top float64) float64 {
	if top <= 0 {
		return 1
	}
	return top * 1.06
}
