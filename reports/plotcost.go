package reports

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"

	"github.com/simbench/simbench/reports/plots"
	"github.com/simbench/simbench/results"
)

// costPanel draws, for each strategy on the rows of the backoff figure
// (row(i) is strategy i's), its total attempts (calls plus retries) beside
// the time it took to finish a finite workload (StrategyResult.FinishS),
// each as a share of the largest among the strategies, so the two bars of
// a row read side by side whatever their units; the row labels give the
// figures themselves. It returns nil when no strategy has a time to finish
// (the workload runs until the duration ends): then total attempts only
// say how much work each strategy got through, which the other panels
// already show per call. h is half a row's bar height.
func costPanel(r *results.Results, row func(int) float64, h float64) *plot.Plot {
	var mostAttempts, mostTime float64
	for _, s := range r.Strategies {
		mostAttempts = max(mostAttempts, float64(s.Attempts))
		mostTime = max(mostTime, s.FinishS)
	}
	if mostTime == 0 {
		return nil
	}
	p := plots.NewPlot("Total attempts beside the time to finish the workload", "share of the largest (%)", "")
	attempts := &plots.Rects{Fill: color.RGBA{R: 230, G: 140, B: 40, A: 255}}
	finish := &plots.Rects{Fill: color.RGBA{R: 60, G: 110, B: 170, A: 255}}
	unfinished := &plots.Rects{Fill: plots.ShadeColor}
	anyUnfinished := false
	var ticks plot.ConstantTicks
	for i, s := range r.Strategies {
		y := row(i)
		label := fmt.Sprintf("%s\n%s attempts", s.Name, num(float64(s.Attempts)))
		if mostAttempts > 0 {
			attempts.Add(0, 100*float64(s.Attempts)/mostAttempts, y-h/6, y+h)
		}
		if s.FinishS > 0 {
			finish.Add(0, 100*s.FinishS/mostTime, y-h, y-h/6)
			label += fmt.Sprintf(", %s s", dec1(s.FinishS))
		} else {
			unfinished.Add(0, 100, y-h, y-h/6)
			anyUnfinished = true
			label += ", did not finish"
		}
		ticks = append(ticks, plot.Tick{Value: y, Label: label})
	}
	p.Add(unfinished, attempts, finish)
	p.Legend.Add("attempts", attempts)
	p.Legend.Add("time to finish", finish)
	if anyUnfinished {
		p.Legend.Add("did not finish", unfinished)
	}
	p.X.Min, p.X.Max = 0, 100
	p.Y.Tick.Marker = ticks
	return p
}
