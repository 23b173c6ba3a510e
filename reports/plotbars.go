package reports

import (
	"fmt"

	"gonum.org/v1/plot"

	"github.com/simbench/simbench/reports/plots"
	"github.com/simbench/simbench/results"
)

// attemptsHistogram draws, per strategy, how many calls took 1, 2, 3, …
// attempts, split into the calls that succeeded and those that gave up.
func attemptsHistogram(r *results.Results, _ Options) (*Figure, error) {
	most := 0
	var hi int64
	for _, s := range r.Strategies {
		most = max(most, len(s.AttemptsPerCall))
		for _, n := range s.AttemptsPerCall {
			hi = max(hi, n)
		}
	}
	if most == 0 || hi == 0 {
		return nil, nil
	}
	var panels []*plot.Plot
	for i := range r.Strategies {
		if s := &r.Strategies[i]; len(s.AttemptsPerCall) > 0 {
			panels = append(panels, attemptsPanel(i, s, most, hi))
		}
	}
	return newFigure("attempts", false,
		"How many calls needed 1, 2, 3, … attempts, and after how many the calls that gave up stopped: red bars are calls that never got a result.",
		panelsHeight(len(panels)), panels...), nil
}

// failedAt is how many of s's calls gave up after k+1 attempts (0 when the
// results do not record it).
func failedAt(s *results.StrategyResult, k int) int64 {
	if k < len(s.AttemptsPerFailedCall) {
		return s.AttemptsPerFailedCall[k]
	}
	return 0
}

// attemptsBase is where the attempts histogram's bars start, below 1 so
// that a single call shows.
const attemptsBase = 0.5

// attemptsPanel is strategy i's attempts histogram, on axes for up to most
// attempts and hi calls: bars of the calls that succeeded and of those
// that gave up, after each number of attempts, or of all calls when the
// results do not record which failed.
func attemptsPanel(i int, s *results.StrategyResult, most int, hi int64) *plot.Plot {
	known := len(s.AttemptsPerFailedCall) > 0 || s.Failed == 0
	var calls, retried, gaveUp int64
	ok := &plots.Rects{Fill: plots.OKColor} // the same in every panel: green succeeded, red gave up
	failed := &plots.Rects{Fill: plots.FailColor}
	unknown := &plots.Rects{Fill: plots.NeutralGray}
	for k, n := range s.AttemptsPerCall {
		calls += n
		if k > 0 {
			retried += n
		}
		x := float64(k + 1)
		if !known {
			if n > 0 {
				unknown.Add(x-0.3, x+0.3, plots.Lg(attemptsBase), plots.Lg(float64(n)))
			}
			continue
		}
		f := failedAt(s, k)
		gaveUp += f
		if n-f > 0 {
			ok.Add(x-0.38, x, plots.Lg(attemptsBase), plots.Lg(float64(n-f)))
		}
		if f > 0 {
			failed.Add(x, x+0.38, plots.Lg(attemptsBase), plots.Lg(float64(f)))
		}
	}
	title := fmt.Sprintf("%s: %s calls, %s retried, %s gave up", s.Name, num(float64(calls)), num(float64(retried)), num(float64(gaveUp)))
	if !known {
		title = fmt.Sprintf("%s: %s calls, %s retried, %s failed", s.Name, num(float64(calls)), num(float64(retried)), num(float64(s.Failed)))
	}
	p := plots.NewPlot(title, "attempts the call took", "calls (log scale)")
	p.Title.TextStyle.Font = plots.Sans(11)
	var ticks plot.ConstantTicks
	for k := 1; k <= most; k++ {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: fmt.Sprint(k)})
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = 0.5, float64(most)+0.5
	p.Y.Tick.Marker = plots.LogAxis{LogTicks: plots.LogTicks{MaxLabels: 6}}
	p.Y.Min, p.Y.Max = plots.Lg(attemptsBase), plots.Lg(float64(hi)*1.6)
	if known {
		p.Add(ok, failed)
		p.Legend.Add("succeeded", ok)
		p.Legend.Add("gave up", failed)
	} else {
		p.Add(unknown)
		p.Legend.Add("calls (outcome", unknown)
		p.Legend.Add("  not recorded)")
	}
	return p
}
