package reports

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/simbench/simbench/results"
)

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
	all := Changes(a, b)
	t, n := changeTable(all, changeFormats(a, b))
	sb.WriteByte('\n')
	switch {
	case len(all) == 0:
		sb.WriteString("no strategy is in both runs\n")
	case !slices.ContainsFunc(all, func(c Change) bool { return c.Delta != 0 }):
		sb.WriteString("no metric changed\n")
	default:
		for _, l := range t.lines() {
			fmt.Fprintln(&sb, l)
		}
	}
	writeOnlyIn(&sb, a, b)
	n.write(&sb)
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return err
	}
	if len(all) == 0 {
		return ErrNothingInCommon
	}
	return nil
}

// changeFormats maps each metric's header, and its rate per minute's, to
// how its values are written.
func changeFormats(a, b *results.Results) map[string]func(float64) string {
	format := map[string]func(float64) string{}
	for _, m := range metrics(a, b) {
		format[m.header] = m.format
		format[m.header+"/min"] = dec1
	}
	return format
}

// verdicts counts the changes by verdict.
type verdicts struct{ better, worse, noise, unjudged int }

func (v *verdicts) count(verdict string) {
	switch verdict {
	case Better:
		v.better++
	case Worse:
		v.worse++
	case WithinNoise:
		v.noise++
	case Unjudged:
		v.unjudged++
	}
}

// write ends a comparison with the counts.
func (v verdicts) write(sb *strings.Builder) {
	fmt.Fprintf(sb, "\n%d better, %d worse", v.better, v.worse)
	if v.noise > 0 {
		fmt.Fprintf(sb, ", %d within noise", v.noise)
	}
	if v.unjudged > 0 {
		fmt.Fprintf(sb, ", %d unjudged (?: one seed a side)", v.unjudged)
	}
	sb.WriteString("\n")
}

// changeTable lays out the changes that are not zero, a row each, the
// strategy named on its first; a strategy with no change gets one row
// saying so. It counts the verdicts of the rows.
func changeTable(all []Change, format map[string]func(float64) string) (*textTable, verdicts) {
	t := &textTable{aligns: []align{alignLeft, alignLeft, alignRight, alignRight, alignRight, alignRight, alignLeft}}
	t.add(cell{text: "strategy"}, cell{text: "metric"}, cell{text: "old"}, cell{text: "new"}, cell{text: "delta"}, cell{text: "%"}, cell{text: ""})
	var n verdicts
	changed := map[string]bool{}
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
		t.add(cell{text: name}, cell{text: c.Metric}, cell{text: f(c.Old)}, cell{text: f(c.New)},
			cell{text: deltaText(c.Delta, f)}, cell{text: percentText(c.Percent)}, cell{text: c.Verdict})
		n.count(c.Verdict)
	}
	return t, n
}

// deltaText writes a change with its sign, "n/a" when infinite.
func deltaText(delta float64, f func(float64) string) string {
	switch {
	case math.IsInf(delta, 0):
		return "n/a"
	case delta > 0:
		return "+" + f(math.Abs(delta))
	case delta < 0:
		return "-" + f(math.Abs(delta))
	}
	return f(math.Abs(delta))
}

// percentText writes a change in percent with its sign, "n/a" for NaN.
func percentText(pct float64) string {
	switch {
	case math.IsNaN(pct):
		return "n/a"
	case pct == 0:
		return "0%"
	}
	return fmt.Sprintf("%+.1f%%", pct)
}

// writeOnlyIn names the strategies found in only one of the runs.
func writeOnlyIn(sb *strings.Builder, a, b *results.Results) {
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
		fmt.Fprintf(sb, "only in old: %s\n", strings.Join(onlyOld, ", "))
	}
	if len(onlyNew) > 0 {
		fmt.Fprintf(sb, "only in new: %s\n", strings.Join(onlyNew, ", "))
	}
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

// seedsText names a run's seeds: "seed 42", or "seeds 42–46".
func seedsText(seeds []uint64) string {
	if len(seeds) == 1 {
		return fmt.Sprintf("seed %d", seeds[0])
	}
	return fmt.Sprintf("seeds %d–%d", seeds[0], seeds[len(seeds)-1])
}
