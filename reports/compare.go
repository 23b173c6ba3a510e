package reports

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/simbench/simbench/sim"
)

// Verdicts of a metric's change, as Compare prints them.
const (
	Better = "better"
	Worse  = "worse"
)

// Change is one metric of one strategy in two runs.
type Change struct {
	// Strategy names the strategy; Metric is the table's column header for
	// the metric, units included ("p95 ms").
	Strategy, Metric string
	// Old and New are the metric's values; Delta is New − Old.
	Old, New, Delta float64
	// Percent is Delta as a percentage of Old; NaN when Old is 0 and New is
	// not, or when one of them is infinite (a time to answer that none came:
	// sim.Unanswered). Two infinities are no change.
	Percent float64
	// Verdict is Better, Worse or "" (unchanged, or a metric with no direction
	// such as attempts or peak in flight). Lower is better for latency,
	// 429s, failed calls, early retries, wasted work and write races;
	// higher for turns, calls and goodput.
	Verdict string
}

// Changes returns, for each strategy present in both a (old) and b (new),
// every metric's change, strategies in b's order and metrics in table
// order. Metrics that do not apply to either run (the latency of a strategy
// that finished no turn) are left out.
func Changes(a, b *sim.Results) []Change {
	ms := metrics(a, b)
	var out []Change
	for i := range b.Strategies {
		nw := &b.Strategies[i]
		old := findStrategy(a, nw.Name)
		if old == nil {
			continue
		}
		for _, m := range ms {
			ov, ok1 := m.value(old)
			nv, ok2 := m.value(nw)
			if !ok1 || !ok2 {
				continue
			}
			c := Change{Strategy: nw.Name, Metric: m.header, Old: ov, New: nv, Delta: nv - ov}
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
			if c.Delta != 0 {
				improved := (m.dir == lowerBetter && c.Delta < 0) || (m.dir == higherBetter && c.Delta > 0)
				switch {
				case m.dir == neutral:
				case improved:
					c.Verdict = Better
				default:
					c.Verdict = Worse
				}
			}
			out = append(out, c)
		}
	}
	return out
}

func findStrategy(r *sim.Results, name string) *sim.StrategyResult {
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
func Compare(w io.Writer, a, b *sim.Results) error {
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
	ms := metrics(a, b)
	format := map[string]func(float64) string{}
	for _, m := range ms {
		format[m.header] = m.format
	}
	t := &textTable{aligns: []align{alignLeft, alignLeft, alignRight, alignRight, alignRight, alignRight, alignLeft}}
	t.add(cell{text: "strategy"}, cell{text: "metric"}, cell{text: "old"}, cell{text: "new"}, cell{text: "delta"}, cell{text: "%"}, cell{text: ""})
	var better, worse int
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
		}
	}
	sb.WriteByte('\n')
	anyChange := false
	for _, c := range changed {
		anyChange = anyChange || c
	}
	switch {
	case len(t.rows) == 1:
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
	fmt.Fprintf(&sb, "\n%d better, %d worse\n", better, worse)
	_, err := io.WriteString(w, sb.String())
	return err
}
