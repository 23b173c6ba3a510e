package reports

import (
	"errors"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/simbench/simbench/results"
)

// Verdicts of a metric's change, as Compare prints them.
const (
	Better = "better"
	Worse  = "worse"
	// WithinNoise marks a change that seeds explain: both runs carry several
	// seeds and the change is not significant.
	WithinNoise = "within noise"
	// Unjudged marks a change between runs of different seeds with one
	// seed each: nothing tells the change from the seed's noise.
	Unjudged = "?"
)

// Alpha is the significance level of Compare's Mann-Whitney U test over
// seeds (as the gate's).
const Alpha = 0.05

// countHeaders are the metrics that count events over a run: compared
// across runs of different durations as rates per minute.
var countHeaders = map[string]bool{"turns": true, "failed turns": true, "calls": true, "attempts": true,
	"429s": true, "failed": true, "early": true, "wasted s": true, "races": true}

// Change is one metric of one strategy in two runs.
type Change struct {
	// Strategy names the strategy; Metric is the table's column header for
	// the metric, units included ("p95 ms"); a count compared across runs
	// of different durations gets "/min" (a rate per minute).
	Strategy, Metric string
	// Old and New are the metric's values (means over seeds when the runs
	// carry several); Delta is New − Old.
	Old, New, Delta float64
	// Percent is Delta as a percentage of Old; NaN when Old is 0 and New is
	// not, or when one of them is infinite (a time to answer that none came:
	// results.Unanswered). Two infinities are no change.
	Percent float64
	// P is the Mann-Whitney U test's p-value over the seeds (NaN when a run
	// has fewer than two seeds).
	P float64
	// Verdict is Better or Worse for a change that counts: significant over
	// seeds (p < Alpha and the 95% intervals apart), or any change between
	// runs of the same seeds, which are deterministic. WithinNoise for a
	// change the seeds explain, Unjudged for one between single runs of
	// different seeds, "" when unchanged or for a metric with no direction
	// (attempts, peak in flight). Lower is better for latency, 429s, failed
	// calls, early retries, wasted work and write races; higher for turns,
	// calls and goodput.
	Verdict string
}

// ErrNothingInCommon is Compare's error when the two runs share no strategy.
var ErrNothingInCommon = errors.New("reports: the two runs have no strategy in common; compare runs of the same scenario's strategies")

// Changes returns, for each strategy present in both a (old) and b (new),
// every metric's change, strategies in b's order and metrics in table
// order. Metrics that do not apply to either run (the latency of a strategy
// that finished no turn) are left out.
func Changes(a, b *results.Results) []Change {
	ms := metrics(a, b)
	rates := a.DurationS != b.DurationS && a.DurationS > 0 && b.DurationS > 0
	sameSeeds := slices.Equal(seedsOf(a), seedsOf(b))
	var out []Change
	for i := range b.Strategies {
		nw := &b.Strategies[i]
		old := findStrategy(a, nw.Name)
		if old == nil {
			continue
		}
		for _, m := range ms {
			perMinute := rates && countHeaders[m.header]
			scaleOld, scaleNew := 1.0, 1.0
			if perMinute {
				scaleOld, scaleNew = 60/a.DurationS, 60/b.DurationS
			}
			if c, ok := change(m, old, nw, perMinute, scaleOld, scaleNew, sameSeeds); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// change is metric m's change from strategy old to nw; with perMinute a
// count compared as a rate per minute, each run's values multiplied by its
// scale (60 over its duration in s). sameSeeds says the runs' seeds are
// the same. ok is false when the metric does not apply to one of them.
func change(m metric, old, nw *results.StrategyResult, perMinute bool, scaleOld, scaleNew float64, sameSeeds bool) (c Change, ok bool) {
	ov, ok1 := meanValue(m, old)
	nv, ok2 := meanValue(m, nw)
	if !ok1 || !ok2 {
		return Change{}, false
	}
	header := m.header
	if perMinute {
		header += "/min"
		ov, nv = ov*scaleOld, nv*scaleNew
	}
	c = Change{Strategy: nw.Name, Metric: header, Old: ov, New: nv, Delta: nv - ov, P: math.NaN()}
	switch {
	case ov == nv:
		c.Delta = 0
	case math.IsInf(ov, 0) || math.IsInf(nv, 0):
		c.Percent = math.NaN()
	case ov != 0:
		c.Percent = 100 * c.Delta / math.Abs(ov)
	case nv != 0:
		c.Percent = math.NaN()
	}
	if c.Delta == 0 || m.dir == neutral {
		return c, true
	}
	improved := (m.dir == lowerBetter && c.Delta < 0) || (m.dir == higherBetter && c.Delta > 0)
	direction := Worse
	if improved {
		direction = Better
	}
	xs, ys := seedValues(m, old, scaleOld), seedValues(m, nw, scaleNew)
	switch {
	case len(xs) >= 2 && len(ys) >= 2:
		var sig bool
		c.P, sig = significant(xs, ys)
		c.Verdict = WithinNoise
		if sig {
			c.Verdict = direction
		}
	case sameSeeds:
		c.Verdict = direction // deterministic: same seeds, same figures unless something changed
	default:
		c.Verdict = Unjudged
	}
	return c, true
}

// seedsOf lists the seeds a run's figures come from.
func seedsOf(r *results.Results) []uint64 {
	if len(r.Seeds) > 0 {
		return r.Seeds
	}
	return []uint64{r.Seed}
}

// seedValues reads a metric under each of a strategy's seeds, scaled; nil
// when the run has one seed or the metric does not apply to some seed.
func seedValues(m metric, s *results.StrategyResult, scale float64) []float64 {
	if len(s.SeedRuns) < 2 {
		return nil
	}
	var xs []float64
	for i := range s.SeedRuns {
		v, ok := m.value(&s.SeedRuns[i])
		if !ok {
			return nil
		}
		xs = append(xs, v*scale)
	}
	return xs
}

// meanValue reads a metric: its mean over the seeds when the run carries
// several, else the run's own value.
func meanValue(m metric, s *results.StrategyResult) (float64, bool) {
	if xs := seedValues(m, s, 1); xs != nil {
		return results.IntervalOf(xs).Mean, true
	}
	return m.value(s)
}

// significant reports whether two samples differ: the Mann-Whitney U test
// (as benchstat and the gate run it) at Alpha, and the two 95% intervals
// of the means apart. Requiring both keeps the dozens of metrics a compare
// tests at once from reporting a few chance differences as changes.
func significant(xs, ys []float64) (p float64, sig bool) {
	for _, v := range slices.Concat(xs, ys) {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return math.NaN(), false
		}
	}
	thr := benchmath.DefaultThresholds
	thr.CompareAlpha = Alpha
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(xs), &thr), benchmath.NewSample(slices.Clone(ys), &thr))
	a, b := results.IntervalOf(xs), results.IntervalOf(ys)
	apart := a.Hi < b.Lo || b.Hi < a.Lo
	return c.P, c.P < c.Alpha && apart
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
