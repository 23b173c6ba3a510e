package reports

import (
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/simbench/simbench/reports/plots"
	"github.com/simbench/simbench/results"
)

// variesBackoff reports whether the results hold two strategies with the
// same cap but different retry policies: only then does comparing them
// say something about backoff rather than about concurrency.
func variesBackoff(r *results.Results) bool {
	byCap := map[int]string{}
	for _, s := range r.Strategies {
		if s.Retry == "" {
			continue
		}
		if prev, ok := byCap[s.MaxInFlight]; ok && prev != s.Retry {
			return true
		}
		byCap[s.MaxInFlight] = s.Retry
	}
	return false
}

// callOutcomes splits a strategy's calls into those that succeeded at the
// first attempt, those that succeeded after retries, and those that gave
// up (failed calls that never got an attempt included).
func callOutcomes(s *results.StrategyResult) (first, afterRetry, gaveUp float64) {
	var histFailed int64
	for k, n := range s.AttemptsPerCall {
		f := failedAt(s, k)
		histFailed += f
		if k == 0 {
			first += float64(n - f)
		} else {
			afterRetry += float64(n - f)
		}
	}
	return first, afterRetry, float64(max(s.Failed, histFailed))
}

// backoffComparison compares retry policies, drawn only when strategies
// with the same cap differ in them (variesBackoff): for a finite workload,
// each policy's total attempts beside its time to finish (costPanel); what
// its calls came to (first try, after retries, gave up), the retries and
// 429s it spent per call, and the time to answer with failed turns counted
// as never answered.
func backoffComparison(r *results.Results, _ Options) (*Figure, error) {
	if !variesBackoff(r) {
		return nil, nil
	}
	n := len(r.Strategies)
	row := func(i int) float64 { return float64(n - 1 - i) }
	const h = 0.36 // half a row's bar height
	outcome, spent, answer := outcomePanel(r, row, h), spentPanel(r, row, h), answerPanel(r, row, h)
	cost := costPanel(r, row, h) // nil for a workload without an end

	var rowTicks, answerTicks plot.ConstantTicks
	for k := range n {
		s := &r.Strategies[n-1-k]
		rowTicks = append(rowTicks, plot.Tick{Value: float64(k), Label: s.Name + "\n" + shortRetry(s.Retry)})
		answerTicks = append(answerTicks, plot.Tick{Value: float64(k),
			Label: fmt.Sprintf("%s\n%s%% of turns answered", s.Name, dec1(100*s.AnswerLatencyMs.AnsweredShare))})
	}
	panels := []*plot.Plot{outcome, spent, answer}
	if cost != nil {
		panels = append([]*plot.Plot{cost}, panels...)
	}
	for _, p := range panels {
		switch p {
		case cost: // its own labels, with the figures
		case answer:
			p.Y.Tick.Marker = answerTicks
		default:
			p.Y.Tick.Marker = rowTicks
		}
		p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
		p.Y.Tick.Label.Font = plots.Sans(9)
		p.Title.TextStyle.Font = plots.Sans(11)
	}
	panel := 70 + vg.Length(n)*34
	caption := "Strategies with the same cap that retry differently: compare the red share of calls that gave up, the 429s each retry drew, and the p95 answer (a red row never got one)."
	if cost != nil {
		caption = "Strategies with the same cap that retry differently: compare the total attempts each sent with the time it took to finish the workload (fewer attempts ease the server; finishing sooner only by sending more loads it), the red share of calls that gave up, the 429s each retry drew, and the p95 answer (a red row never got one)."
	}
	return newFigure("backoff", false,
		caption, max(figureHeight, vg.Length(len(panels))*panel), panels...), nil
}

// outcomePanel draws, for each strategy on the rows of the backoff figure
// (row(i) is strategy i's, h half a row's bar height), the shares of its
// calls that succeeded at the first try, after retries, and that gave up.
func outcomePanel(r *results.Results, row func(int) float64, h float64) *plot.Plot {
	p := plots.NewPlot("What the calls came to", "share of calls (%)", "")
	first, retried, gave := &plots.Rects{Fill: color.RGBA{R: 80, G: 150, B: 90, A: 255}}, &plots.Rects{Fill: color.RGBA{R: 170, G: 210, B: 150, A: 255}}, &plots.Rects{Fill: plots.FailColor}
	for i := range r.Strategies {
		a, b, c := callOutcomes(&r.Strategies[i])
		total := a + b + c
		if total == 0 {
			continue
		}
		a, b, c = 100*a/total, 100*b/total, 100*c/total
		y := row(i)
		first.Add(0, a, y-h, y+h)
		retried.Add(a, a+b, y-h, y+h)
		gave.Add(a+b, a+b+c, y-h, y+h)
	}
	p.Add(first, retried, gave)
	p.Legend.Add("succeeded first try", first)
	p.Legend.Add("succeeded after retries", retried)
	p.Legend.Add("gave up", gave)
	p.X.Min, p.X.Max = 0, 100
	return p
}

// spentPanel draws, for each strategy on the rows of the backoff figure,
// the retries, 429s and early retries it spent per call.
func spentPanel(r *results.Results, row func(int) float64, h float64) *plot.Plot {
	p := plots.NewPlot("What the retries cost", "per call", "")
	retryBars, limitedBars, earlyBars := &plots.Rects{Fill: color.RGBA{R: 230, G: 140, B: 40, A: 255}}, &plots.Rects{Fill: plots.LimitColor}, &plots.Rects{Fill: color.RGBA{R: 120, G: 90, B: 170, A: 255}}
	top := 0.0
	for i, s := range r.Strategies {
		if s.Calls+s.Failed == 0 {
			continue
		}
		calls := float64(max(s.Calls, 1))
		vals := []float64{float64(s.Attempts-s.Calls) / calls, float64(s.RateLimited) / calls, float64(s.EarlyRetries) / calls}
		y := row(i)
		for k, b := range []*plots.Rects{retryBars, limitedBars, earlyBars} {
			v := max(0, vals[k])
			y1 := y + h - float64(k)*2*h/3
			b.Add(0, v, y1-2*h/3, y1)
			top = max(top, v)
		}
	}
	p.Add(retryBars, limitedBars, earlyBars)
	p.Legend.Add("retries", retryBars)
	p.Legend.Add("429s", limitedBars)
	p.Legend.Add("early retries", earlyBars)
	p.X.Min, p.X.Max = 0, plots.FitTop(top)
	return p
}

// answerPanel draws, for each strategy on the rows of the backoff figure,
// its p50 and p95 time to answer, failed turns counted as never answered:
// a time that never came fills its row.
func answerPanel(r *results.Results, row func(int) float64, h float64) *plot.Plot {
	p := plots.NewPlot("Time to answer (failed turns never answered)", "time to answer (ms)", "")
	p50, p95, never := &plots.Rects{Fill: color.RGBA{R: 120, G: 170, B: 120, A: 255}}, &plots.Rects{Fill: color.RGBA{R: 40, G: 100, B: 50, A: 255}}, &plots.Rects{Fill: plots.ShadeColor}
	top := 0.0
	for _, s := range r.Strategies {
		for _, v := range []results.AnswerMs{s.AnswerLatencyMs.P50, s.AnswerLatencyMs.P95} {
			if v.Answered() {
				top = max(top, float64(v))
			}
		}
	}
	xMax := plots.FitTop(top)
	anyNever := false
	for i, s := range r.Strategies {
		y := row(i)
		for k, v := range []results.AnswerMs{s.AnswerLatencyMs.P50, s.AnswerLatencyMs.P95} {
			y1 := y + h - float64(k)*h
			switch {
			case s.Turns == 0 && s.UnfinishedTurns == 0:
			case !v.Answered():
				never.Add(0, xMax, y1-h, y1)
				anyNever = true
			case k == 0:
				p50.Add(0, float64(v), y1-h, y1)
			default:
				p95.Add(0, float64(v), y1-h, y1)
			}
		}
	}
	p.Add(never, p50, p95)
	p.Legend.Add("p50", p50)
	p.Legend.Add("p95", p95)
	if anyNever {
		p.Legend.Add("never answered", never)
	}
	p.X.Min, p.X.Max = 0, xMax
	return p
}

// shortRetry keeps a retry description's backoff and the Retry-After
// treatment, for a row label: "full-jitter 1s–30s, 6 attempts".
func shortRetry(desc string) string {
	parts := strings.Split(desc, ", ")
	if len(parts) > 2 {
		parts = parts[:2]
	}
	return strings.Join(parts, ", ")
}
