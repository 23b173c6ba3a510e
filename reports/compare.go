package reports

import (
	"errors"
	"math"
	"slices"

	"github.com/simbench/simbench/internal/judge"
	"github.com/simbench/simbench/results"
)

// Verdicts of a metric's change, as Compare prints them.
const (
	Better = "better"
	Worse  = "worse"
	// WithinNoise marks a change between runs of different seeds that the
	// seeds' spread explains, when the seeds were enough to see a change
	// of CompareOptions.MinEffect (see internal/judge).
	WithinNoise = "within noise"
	// Undecided marks a change between runs of different seeds that is not
	// significant, with too few seeds to tell a change of MinEffect from
	// noise; Change.SeedsNeeded says how many would.
	Undecided = "undecided"
)

// CompareOptions tune how changes between runs of different seeds are
// judged; the zero value uses the defaults (family-wise level 5%, a change
// of 5% to detect, power 80%). Runs of the same seeds need none: any
// change counts.
type CompareOptions struct {
	// Alpha is the family-wise significance level over every metric
	// compared; 0 means 0.05.
	Alpha float64
	// MinEffect is the smallest change, as a fraction of the old value
	// (0.05 = 5%), the seeds must be enough to see before a change that is
	// not significant is called within noise; 0 means 0.05.
	MinEffect float64
}

// Change is one metric of one strategy in two runs.
type Change struct {
	// Strategy names the strategy; Metric is the table's column header for
	// the metric, units included ("p95 ms"); a count compared across runs
	// of different durations gets "/min" (a rate per minute).
	Strategy, Metric string
	// Old and New are the metric's values (means over seeds when the runs
	// carry several); Delta is New − Old.
	Old, New, Delta float64
	// Lo and Hi bound Delta's 95% interval: over the per-seed differences
	// when the runs share their seeds, Welch's for different seeds; equal
	// to Delta with one seed a side, NaN when a side's figure is infinite
	// or different single seeds leave no spread to measure.
	Lo, Hi float64
	// Percent is Delta as a percentage of Old; NaN when Old is 0 and New is
	// not, or when one of them is infinite (a time to answer that none came:
	// results.Unanswered). Two infinities are no change. PercentLo and
	// PercentHi are Lo and Hi in the same percent of Old.
	Percent, PercentLo, PercentHi float64
	// Paired says the runs share their seeds (in order): each seed's
	// figures are compared with its own, and any change counts.
	Paired bool
	// P is Welch's t-test p-value over the seeds, before the family-wise
	// adjustment (NaN when the runs share their seeds or a side has one).
	P float64
	// SeedsNeeded is, for an Undecided change, the seeds a side that would
	// tell a change of MinEffect from noise (judge.MaxSeeds+1: more than
	// judge.MaxSeeds); 0 otherwise.
	SeedsNeeded int
	// Verdict is Better or Worse for a change that counts: any change
	// between runs of the same seeds (deterministic, so beyond
	// floating-point noise a change is caused), or, between runs of
	// different seeds, a change significant by Welch's t-test at Alpha
	// family-wise (Holm's adjustment over every metric compared).
	// WithinNoise or Undecided for one that is not (see CompareOptions);
	// "" when unchanged or for a metric with no direction (attempts, peak
	// in flight). Lower is better for latency, 429s, failed calls, early
	// retries, wasted work and write races; higher for turns, calls and
	// goodput.
	Verdict string
	dir     direction
}

// ErrNothingInCommon is Compare's error when the two runs share no strategy.
var ErrNothingInCommon = errors.New("reports: the two runs have no strategy in common; compare runs of the same scenario's strategies")

// Changes returns, for each strategy present in both a (old) and b (new),
// every metric's change, strategies in b's order and metrics in table
// order. Metrics that do not apply to either run (the latency of a strategy
// that finished no turn) are left out.
func Changes(a, b *results.Results, o CompareOptions) []Change {
	ms := metrics(a, b)
	rates := a.DurationS != b.DurationS && a.DurationS > 0 && b.DurationS > 0
	paired := slices.Equal(seedsOf(a), seedsOf(b))
	var out []Change
	var samples []judge.Sample
	for i := range b.Strategies {
		nw := &b.Strategies[i]
		old := findStrategy(a, nw.Name)
		if old == nil {
			continue
		}
		for _, m := range ms {
			scaleOld, scaleNew := 1.0, 1.0
			header := m.header
			if f, _ := results.Lookup(m.key); rates && f.OverRun {
				scaleOld, scaleNew = 60/a.DurationS, 60/b.DurationS
				header += "/min"
			}
			xs, ys := seedValues(m, old, scaleOld), seedValues(m, nw, scaleNew)
			if xs == nil || ys == nil {
				continue
			}
			// Seeds pair up only when both sides hold each one's figures.
			p := paired && len(xs) == len(ys)
			out = append(out, Change{Strategy: nw.Name, Metric: header, Paired: p, dir: m.dir})
			samples = append(samples, judge.Sample{Old: xs, New: ys, Paired: p})
		}
	}
	js := judge.Judge(samples, judge.Options{Alpha: o.Alpha, MinEffect: o.MinEffect})
	for i := range out {
		fill(&out[i], samples[i], js[i])
	}
	return out
}

// fill sets a change's figures from its sample and its judgement.
func fill(c *Change, s judge.Sample, j judge.Judgement) {
	c.Old, c.New = mean(s.Old), mean(s.New)
	c.Delta, c.Lo, c.Hi, c.P, c.SeedsNeeded = c.New-c.Old, j.Lo, j.Hi, j.P, j.SeedsNeeded
	c.Percent, c.PercentLo, c.PercentHi = math.NaN(), math.NaN(), math.NaN()
	switch {
	case c.Old == c.New:
		c.Delta, c.Percent = 0, 0
	case math.IsInf(c.Old, 0) || math.IsInf(c.New, 0):
		c.Delta = c.New - c.Old // ±Inf, or NaN for two infinities of opposite sign
	case c.Old != 0:
		c.Percent = 100 * c.Delta / math.Abs(c.Old)
		c.PercentLo, c.PercentHi = 100*c.Lo/math.Abs(c.Old), 100*c.Hi/math.Abs(c.Old)
	}
	if c.dir == neutral {
		return
	}
	better := func(up bool) string {
		if up == (c.dir == higherBetter) {
			return Better
		}
		return Worse
	}
	switch j.Outcome {
	case judge.Up:
		c.Verdict = better(true)
	case judge.Down:
		c.Verdict = better(false)
	case judge.Noise:
		c.Verdict = WithinNoise
	case judge.Undecided:
		c.Verdict = Undecided
	}
}

// mean is the mean of a metric's values over the seeds: +Inf when one is
// (a time to answer some seed never gave).
func mean(xs []float64) float64 { return results.IntervalOf(xs).Mean }

// seedsOf lists the seeds a run's figures come from.
func seedsOf(r *results.Results) []uint64 {
	if len(r.Seeds) > 0 {
		return r.Seeds
	}
	return []uint64{r.Seed}
}

// seedValues reads a metric under each of a strategy's seeds, scaled: the
// run's own value when it has one seed; nil when the metric does not apply
// to some seed.
func seedValues(m metric, s *results.StrategyResult, scale float64) []float64 {
	runs := s.SeedRuns
	if len(runs) < 2 {
		runs = []results.StrategyResult{*s}
	}
	var xs []float64
	for i := range runs {
		v, ok := m.value(&runs[i])
		if !ok {
			return nil
		}
		xs = append(xs, v*scale)
	}
	return xs
}

// meanValue reads a metric: its mean over the seeds when the run carries
// several (results.json's seed_stats), else the run's own value.
func meanValue(m metric, s *results.StrategyResult) (float64, bool) {
	if iv, ok := m.interval(s); ok {
		return iv.Mean, true
	}
	return m.value(s)
}

// findStrategy returns the strategy of r named name, nil when r has none.
func findStrategy(r *results.Results, name string) *results.StrategyResult {
	for i := range r.Strategies {
		if r.Strategies[i].Name == name {
			return &r.Strategies[i]
		}
	}
	return nil
}
