package reports

import (
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/simbench/simbench/results"
)

// rects is a plotter of filled rectangles given in data coordinates: bars
// (on linear or log axes, from any base) and shaded time spans.
type rects struct {
	fill color.Color
	r    []vg.Rectangle // in data units, not points
}

func (b *rects) add(x0, x1, y0, y1 float64) {
	b.r = append(b.r, vg.Rectangle{Min: vg.Point{X: vg.Length(x0), Y: vg.Length(y0)}, Max: vg.Point{X: vg.Length(x1), Y: vg.Length(y1)}})
}

// Plot implements plot.Plotter.
func (b *rects) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	c.SetColor(b.fill)
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
func (b *rects) Thumbnail(c *draw.Canvas) {
	c.SetColor(b.fill)
	pad := (c.Max.Y - c.Min.Y) / 6
	r := vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: c.Min.Y + pad}, Max: vg.Point{X: c.Max.X, Y: c.Max.Y - pad}}
	c.Fill(r.Path())
}

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
	var ticks plot.ConstantTicks
	for k := 1; k <= most; k++ {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: fmt.Sprint(k)})
	}
	// Bars start below 1 so that a single call shows.
	const base = 0.5
	var panels []*plot.Plot
	for i, s := range r.Strategies {
		if len(s.AttemptsPerCall) == 0 {
			continue
		}
		known := len(s.AttemptsPerFailedCall) > 0 || s.Failed == 0
		var calls, retried, gaveUp int64
		ok := &rects{fill: strategyColor(i)}
		failed := &rects{fill: failColor}
		unknown := &rects{fill: neutralGray}
		for k, n := range s.AttemptsPerCall {
			calls += n
			if k > 0 {
				retried += n
			}
			x := float64(k + 1)
			if !known {
				if n > 0 {
					unknown.add(x-0.3, x+0.3, lg(base), lg(float64(n)))
				}
				continue
			}
			var f int64
			if k < len(s.AttemptsPerFailedCall) {
				f = s.AttemptsPerFailedCall[k]
			}
			gaveUp += f
			if n-f > 0 {
				ok.add(x-0.38, x, lg(base), lg(float64(n-f)))
			}
			if f > 0 {
				failed.add(x, x+0.38, lg(base), lg(float64(f)))
			}
		}
		title := fmt.Sprintf("%s: %s calls, %s retried, %s gave up", s.Name, num(float64(calls)), num(float64(retried)), num(float64(gaveUp)))
		if !known {
			title = fmt.Sprintf("%s: %s calls, %s retried, %s failed", s.Name, num(float64(calls)), num(float64(retried)), num(float64(s.Failed)))
		}
		p := newPlot(title, "attempts the call took", "calls (log scale)")
		p.Title.TextStyle.Font = sans(11)
		p.X.Tick.Marker = ticks
		p.X.Min, p.X.Max = 0.5, float64(most)+0.5
		p.Y.Tick.Marker = logAxis{logTicks{maxLabels: 6}}
		p.Y.Min, p.Y.Max = lg(base), lg(float64(hi)*1.6)
		if known {
			p.Add(ok, failed)
			p.Legend.Add("succeeded", ok)
			p.Legend.Add("gave up", failed)
		} else {
			p.Add(unknown)
			p.Legend.Add("calls (outcome", unknown)
			p.Legend.Add("  not recorded)")
		}
		panels = append(panels, p)
	}
	return newFigure("attempts", "Attempts per call",
		"How many calls needed 1, 2, 3, … attempts, and after how many the calls that gave up stopped: red bars are calls that never got a result.",
		panelsHeight(len(panels)), panels...), nil
}

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
		var f int64
		if k < len(s.AttemptsPerFailedCall) {
			f = s.AttemptsPerFailedCall[k]
		}
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
	names := make([]string, n)
	for i, s := range r.Strategies {
		names[n-1-i] = s.Name + "\n" + shortRetry(s.Retry)
	}
	row := func(i int) float64 { return float64(n - 1 - i) }
	const h = 0.36 // half a row's bar height

	outcome := newPlot("What the calls came to", "share of calls (%)", "")
	first, retried, gave := &rects{fill: color.RGBA{R: 80, G: 150, B: 90, A: 255}}, &rects{fill: color.RGBA{R: 170, G: 210, B: 150, A: 255}}, &rects{fill: failColor}
	for i := range r.Strategies {
		a, b, c := callOutcomes(&r.Strategies[i])
		total := a + b + c
		if total == 0 {
			continue
		}
		a, b, c = 100*a/total, 100*b/total, 100*c/total
		y := row(i)
		first.add(0, a, y-h, y+h)
		retried.add(a, a+b, y-h, y+h)
		gave.add(a+b, a+b+c, y-h, y+h)
	}
	outcome.Add(first, retried, gave)
	outcome.Legend.Add("succeeded first try", first)
	outcome.Legend.Add("succeeded after retries", retried)
	outcome.Legend.Add("gave up", gave)
	outcome.X.Min, outcome.X.Max = 0, 100

	spent := newPlot("What the retries cost", "per call", "")
	retryBars, limitedBars, earlyBars := &rects{fill: color.RGBA{R: 230, G: 140, B: 40, A: 255}}, &rects{fill: limitColor}, &rects{fill: color.RGBA{R: 120, G: 90, B: 170, A: 255}}
	top := 0.0
	for i, s := range r.Strategies {
		if s.Calls+s.Failed == 0 {
			continue
		}
		calls := float64(max(s.Calls, 1))
		vals := []float64{float64(s.Attempts-s.Calls) / calls, float64(s.RateLimited) / calls, float64(s.EarlyRetries) / calls}
		y := row(i)
		for k, b := range []*rects{retryBars, limitedBars, earlyBars} {
			v := max(0, vals[k])
			y1 := y + h - float64(k)*2*h/3
			b.add(0, v, y1-2*h/3, y1)
			top = max(top, v)
		}
	}
	spent.Add(retryBars, limitedBars, earlyBars)
	spent.Legend.Add("retries", retryBars)
	spent.Legend.Add("429s", limitedBars)
	spent.Legend.Add("early retries", earlyBars)
	spent.X.Min, spent.X.Max = 0, fitTop(top)

	answer := newPlot("Time to answer (failed turns never answered)", "time to answer (ms)", "")
	p50, p95, never := &rects{fill: color.RGBA{R: 120, G: 170, B: 120, A: 255}}, &rects{fill: color.RGBA{R: 40, G: 100, B: 50, A: 255}}, &rects{fill: shadeColor}
	top = 0
	for _, s := range r.Strategies {
		for _, v := range []results.AnswerMs{s.AnswerLatencyMs.P50, s.AnswerLatencyMs.P95} {
			if v.Answered() {
				top = max(top, float64(v))
			}
		}
	}
	xMax := fitTop(top)
	anyNever := false
	for i, s := range r.Strategies {
		y := row(i)
		for k, v := range []results.AnswerMs{s.AnswerLatencyMs.P50, s.AnswerLatencyMs.P95} {
			y1 := y + h - float64(k)*h
			switch {
			case s.Turns == 0 && s.UnfinishedTurns == 0:
			case !v.Answered():
				never.add(0, xMax, y1-h, y1)
				anyNever = true
			case k == 0:
				p50.add(0, float64(v), y1-h, y1)
			default:
				p95.add(0, float64(v), y1-h, y1)
			}
		}
	}
	answer.Add(never, p50, p95)
	answer.Legend.Add("p50", p50)
	answer.Legend.Add("p95", p95)
	if anyNever {
		answer.Legend.Add("never answered", never)
	}
	answer.X.Min, answer.X.Max = 0, xMax

	cost := costPanel(r, row, h) // nil for a workload without an end

	var rowTicks, answerTicks plot.ConstantTicks
	for k, name := range names {
		rowTicks = append(rowTicks, plot.Tick{Value: float64(k), Label: name})
		s := &r.Strategies[n-1-k]
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
		p.Y.Tick.Label.Font = sans(9)
		p.Title.TextStyle.Font = sans(11)
	}
	panel := 70 + vg.Length(n)*34
	caption := "Strategies with the same cap that retry differently: compare the red share of calls that gave up, the 429s each retry drew, and the p95 answer (a red row never got one)."
	if cost != nil {
		caption = "Strategies with the same cap that retry differently: compare the total attempts each sent with the time it took to finish the workload (fewer attempts ease the server; finishing sooner only by sending more loads it), the red share of calls that gave up, the 429s each retry drew, and the p95 answer (a red row never got one)."
	}
	return newFigure("backoff", "Backoff comparison",
		caption, max(figureHeight, vg.Length(len(panels))*panel), panels...), nil
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
