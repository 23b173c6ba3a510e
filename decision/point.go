package decision

import (
	"math"

	"github.com/simbench/simbench/results"
)

// SweepPointOf reads a sweep point from one strategy's results, run with
// the given max in flight. A strategy run over several seeds (SeedRuns)
// gives the means over them, with the p95's 95% interval; a percentile
// that some seed never answered makes the mean Unanswered.
func SweepPointOf(maxInFlight int, s results.StrategyResult) results.SweepPoint {
	if len(s.SeedRuns) < 2 {
		p := onePoint(maxInFlight, s)
		if len(s.SeedRuns) == 1 { // an interrupted sweep: one seed of several finished
			p.Seeds = 1
		}
		return p
	}
	var p50, p95, answered, goodput, share, cost []float64
	var per []results.SeedFigures
	for _, r := range s.SeedRuns {
		q := onePoint(maxInFlight, r)
		per = append(per, results.SeedFigures{P95Ms: q.P95Ms, AnsweredShare: q.AnsweredShare, CostPerAnsweredTaskUSD: q.CostPerAnsweredTaskUSD})
		if q.CostPerAnsweredTaskUSD > 0 {
			cost = append(cost, q.CostPerAnsweredTaskUSD)
		}
		p50, p95 = append(p50, float64(q.P50Ms)), append(p95, float64(q.P95Ms))
		answered, goodput, share = append(answered, q.AnsweredShare), append(goodput, q.GoodputPerS), append(share, q.RateLimitedShare)
	}
	iv := results.IntervalOf(p95)
	p := results.SweepPoint{
		Cap: maxInFlight, P50Ms: results.AnswerMs(results.IntervalOf(p50).Mean), P95Ms: results.AnswerMs(iv.Mean),
		P95LoMs: results.AnswerMs(iv.Lo), P95HiMs: results.AnswerMs(iv.Hi), Seeds: len(s.SeedRuns),
		AnsweredShare: results.IntervalOf(answered).Mean, GoodputPerS: results.IntervalOf(goodput).Mean,
		RateLimitedShare: results.IntervalOf(share).Mean, PerSeed: per,
	}
	if len(cost) > 0 {
		p.CostPerAnsweredTaskUSD = round6(results.IntervalOf(cost).Mean)
	}
	return p
}

// round6 rounds to six decimals, as results.json's costs are.
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// onePoint reads a sweep point from one run. Its time to answer and
// answered share are among the turns the scheduler could answer
// (AnswerOf).
func onePoint(maxInFlight int, s results.StrategyResult) results.SweepPoint {
	a := AnswerOf(s)
	p := results.SweepPoint{Cap: maxInFlight, P50Ms: a.P50, P95Ms: a.P95, AnsweredShare: a.AnsweredShare, GoodputPerS: s.GoodputPerS}
	if s.Tasks != nil {
		p.CostPerAnsweredTaskUSD = s.Tasks.CostPerAnsweredTaskUSD
	}
	if s.Attempts > 0 {
		p.RateLimitedShare = float64(s.RateLimited) / float64(s.Attempts)
	}
	return p
}

// AnswerOf is the time to answer the decision's rule reads from one run:
// among the turns the scheduler could answer, which leaves out the turns
// that failed for reasons of the model (tasks.scheduler_answer_latency_ms,
// present when the scenario's model turns may fail), else
// answer_latency_ms. No cap or pace makes a model right, so a turn it got
// wrong counts against neither the answered share nor the p95.
func AnswerOf(s results.StrategyResult) results.AnswerSummary {
	if t := s.Tasks; t != nil && t.SchedulerAnswerLatencyMs != nil {
		return *t.SchedulerAnswerLatencyMs
	}
	return s.AnswerLatencyMs
}
