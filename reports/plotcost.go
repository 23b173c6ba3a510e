package reports

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"

	"github.com/simbench/simbench/sim"
)

// costPanel draws, for each strategy on the rows of the backoff figure
// (row(i) is strategy i's), its total attempts (calls plus retries) beside
// the time it took to finish a finite workload (StrategyResult.FinishS),
// each as a share of the largest among the strategies, so the two bars of
// a row read side by side whatever their units; the row labels give the
// figures themselves. Without a finite workload (no strategy has a time to
// finish) it draws the attempts alone. h is half a row's bar height.
func costPanel(r *sim.Results, row func(int) float64, h float64) *plot.Plot {
	var mostAttempts, mostTime float64
	for _, s := range r.Strategies {
		mostAttempts = max(mostAttempts, float64(s.Attempts))
		mostTime = max(mostTime, s.FinishS)
	}
	title := "Total attempts (calls + retries)"
	if mostTime > 0 {
		title = "Total attempts beside the time to finish the workload"
	}
	p := newPlot(title, "share of the largest (%)", "")
	attempts := &rects{fill: color.RGBA{R: 230, G: 140, B: 40, A: 255}}
	finish := &rects{fill: color.RGBA{R: 60, G: 110, B: 170, A: 255}}
	unfinished := &rects{fill: shadeColor}
	anyUnfinished := false
	var ticks plot.ConstantTicks
	for i, s := range r.Strategies {
		y := row(i)
		label := fmt.Sprintf("%s\n%s attempts", s.Name, num(float64(s.Attempts)))
		if mostAttempts > 0 {
			bottom := y - h
			if mostTime > 0 {
				bottom = y - h/6
			}
			attempts.add(0, 100*float64(s.Attempts)/mostAttempts, bottom, y+h)
		}
		if mostTime > 0 {
			switch {
			case s.FinishS > 0:
				finish.add(0, 100*s.FinishS/mostTime, y-h, y-h/6)
				label += fmt.Sprintf(", %s s", dec1(s.FinishS))
			default:
				unfinished.add(0, 100, y-h, y-h/6)
				anyUnfinished = true
				label += ", did not finish"
			}
		}
		ticks = append(ticks, plot.Tick{Value: y, Label: label})
	}
	p.Add(unfinished, attempts, finish)
	p.Legend.Add("attempts", attempts)
	if mostTime > 0 {
		p.Legend.Add("time to finish", finish)
	}
	if anyUnfinished {
		p.Legend.Add("did not finish", unfinished)
	}
	p.X.Min, p.X.Max = 0, 100
	p.Y.Tick.Marker = ticks
	return p
}
