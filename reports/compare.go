package reports

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

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
			ov, ok1 := meanValue(m, old)
			nv, ok2 := meanValue(m, nw)
			if !ok1 || !ok2 {
				continue
			}
			header := m.header
			scaleOld, scaleNew := 1.0, 1.0
			if rates && countHeaders[m.header] {
				header += "/min"
				scaleOld, scaleNew = 60/a.DurationS, 60/b.DurationS
				ov, nv = ov*scaleOld, nv*scaleNew
			}
			c := Change{Strategy: nw.Name, Metric: header, Old: ov, New: nv, Delta: nv - ov, P: math.NaN()}
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
				out = append(out, c)
				continue
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
			out = append(out, c)
		}
	}
	return out
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

// compareWarnings says what differs between the runs beyond the code under
// test: the scenario's conditions, the seeds, the duration.
func compareWarnings(a, b *results.Results) []string {
	var out []string
	if a.Scenario != b.Scenario {
		out = append(out, fmt.Sprintf("warning: different scenarios (%s, %s): the figures measure different workloads", a.Scenario, b.Scenario))
	} else if a.ScenarioDigest != "" && b.ScenarioDigest != "" && a.ScenarioDigest != b.ScenarioDigest {
		out = append(out, "warning: the scenario file differs between the runs (workload, services or tools changed): a change may come from the file, not the code")
	}
	if !slices.Equal(seedsOf(a), seedsOf(b)) {
		w := fmt.Sprintf("warning: different seeds (%s, %s)", seedsText(seedsOf(a)), seedsText(seedsOf(b)))
		if len(seedsOf(a)) < 2 || len(seedsOf(b)) < 2 {
			w += ": with one seed a side, nothing tells a change from noise (\"?\"); run both with --seeds 5"
		} else {
			w += ": a change counts when significant over the seeds, else it is within noise"
		}
		out = append(out, w)
	}
	if a.DurationS != b.DurationS {
		out = append(out, fmt.Sprintf("warning: different durations (%s s, %s s): counts are compared as rates per minute", num(a.DurationS), num(b.DurationS)))
	}
	return out
}

func seedsText(seeds []uint64) string {
	if len(seeds) == 1 {
		return fmt.Sprintf("seed %d", seeds[0])
	}
	return fmt.Sprintf("seeds %d–%d", seeds[0], seeds[len(seeds)-1])
}

func findStrategy(r *results.Results, name string) *results.StrategyResult {
	for i := range r.Strategies {
		if r.Strategies[i].Name == name {
			return &r.Strategies[i]
		}
	}
	return nil
}

// Compare writes, per strategy present in both runs and per metric that
// changed, the old value (from a), the new one (from b), the difference and
// the difference in percent of the old value, with "better" or "worse"
// marked (see Change.Verdict); a strategy with no change gets one line
// saying so. Then the strategies found in only one run, and a count of
// changes for the better and the worse. Changes returns the same figures,
// unchanged metrics included, for programs.
func Compare(w io.Writer, a, b *results.Results) error {
	if a == nil || b == nil {
		return errors.New("reports: compare needs two results")
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "old: %s\nnew: %s\n", runLine(a), runLine(b))
	for _, warn := range warnings(a) {
		fmt.Fprintln(&sb, "old "+warn)
	}
	for _, warn := range warnings(b) {
		fmt.Fprintln(&sb, "new "+warn)
	}
	for _, warn := range compareWarnings(a, b) {
		fmt.Fprintln(&sb, warn)
	}
	ms := metrics(a, b)
	format := map[string]func(float64) string{}
	for _, m := range ms {
		format[m.header] = m.format
		format[m.header+"/min"] = dec1
	}
	t := &textTable{aligns: []align{alignLeft, alignLeft, alignRight, alignRight, alignRight, alignRight, alignLeft}}
	t.add(cell{text: "strategy"}, cell{text: "metric"}, cell{text: "old"}, cell{text: "new"}, cell{text: "delta"}, cell{text: "%"}, cell{text: ""})
	var better, worse, noise, unjudged int
	changed := map[string]bool{}
	all := Changes(a, b)
	for _, c := range all {
		changed[c.Strategy] = changed[c.Strategy] || c.Delta != 0
	}
	shown := map[string]bool{}
	for _, c := range all {
		if !changed[c.Strategy] && !shown[c.Strategy] {
			t.add(cell{text: c.Strategy}, cell{text: "no change"})
			shown[c.Strategy] = true
		}
		if c.Delta == 0 {
			continue
		}
		name := ""
		if !shown[c.Strategy] {
			name = c.Strategy
		}
		shown[c.Strategy] = true
		f := format[c.Metric]
		delta := f(math.Abs(c.Delta))
		switch {
		case math.IsInf(c.Delta, 0):
			delta = "n/a"
		case c.Delta > 0:
			delta = "+" + delta
		case c.Delta < 0:
			delta = "-" + delta
		}
		pct := "n/a"
		if !math.IsNaN(c.Percent) {
			pct = fmt.Sprintf("%+.1f%%", c.Percent)
			if c.Percent == 0 {
				pct = "0%"
			}
		}
		t.add(cell{text: name}, cell{text: c.Metric}, cell{text: f(c.Old)}, cell{text: f(c.New)}, cell{text: delta}, cell{text: pct}, cell{text: c.Verdict})
		switch c.Verdict {
		case Better:
			better++
		case Worse:
			worse++
		case WithinNoise:
			noise++
		case Unjudged:
			unjudged++
		}
	}
	sb.WriteByte('\n')
	anyChange := false
	for _, c := range changed {
		anyChange = anyChange || c
	}
	switch {
	case len(t.rows) == 1 && len(all) == 0:
		sb.WriteString("no strategy is in both runs\n")
	case !anyChange:
		sb.WriteString("no metric changed\n")
	default:
		for _, l := range t.lines() {
			fmt.Fprintln(&sb, l)
		}
	}
	var onlyOld, onlyNew []string
	for _, s := range a.Strategies {
		if findStrategy(b, s.Name) == nil {
			onlyOld = append(onlyOld, s.Name)
		}
	}
	for _, s := range b.Strategies {
		if findStrategy(a, s.Name) == nil {
			onlyNew = append(onlyNew, s.Name)
		}
	}
	if len(onlyOld) > 0 || len(onlyNew) > 0 {
		sb.WriteByte('\n')
	}
	if len(onlyOld) > 0 {
		fmt.Fprintf(&sb, "only in old: %s\n", strings.Join(onlyOld, ", "))
	}
	if len(onlyNew) > 0 {
		fmt.Fprintf(&sb, "only in new: %s\n", strings.Join(onlyNew, ", "))
	}
	fmt.Fprintf(&sb, "\n%d better, %d worse", better, worse)
	if noise > 0 {
		fmt.Fprintf(&sb, ", %d within noise", noise)
	}
	if unjudged > 0 {
		fmt.Fprintf(&sb, ", %d unjudged (?: one seed a side)", unjudged)
	}
	sb.WriteString("\n")
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return err
	}
	if len(all) == 0 {
		return ErrNothingInCommon
	}
	return nil
}
