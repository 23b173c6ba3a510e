package reports

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/simbench/simbench/internal/judge"
	"github.com/simbench/simbench/results"
)

// Compare writes, per strategy present in both runs and per metric that
// changed, the old value (from a), the new one (from b), the difference,
// the difference in percent of the old value with its 95% interval, and
// the verdict (see Change.Verdict; an undecided one says how many seeds a
// side would decide it); a strategy with no change gets one line saying
// so. Then the strategies found in only one run, and the count of changes
// by verdict, which it also returns (for --fail-on). Changes returns the
// same figures, unchanged metrics included, for programs.
func Compare(w io.Writer, a, b *results.Results, o CompareOptions) (Tally, error) {
	if a == nil || b == nil {
		return Tally{}, errors.New("reports: compare needs two results")
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
	all := Changes(a, b, o)
	t, n := changeTable(all, changeFormats(a, b))
	sb.WriteByte('\n')
	switch {
	case len(all) == 0:
		sb.WriteString("no strategy is in both runs\n")
	case !slices.ContainsFunc(all, shown):
		sb.WriteString("no metric changed\n")
	default:
		for _, l := range t.lines() {
			fmt.Fprintln(&sb, l)
		}
	}
	writeOnlyIn(&sb, a, b)
	n.write(&sb)
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return n, err
	}
	if len(all) == 0 {
		return n, ErrNothingInCommon
	}
	return n, nil
}

// shown reports whether a change gets a row: its value moved, or it counts
// (seeds that moved in opposite directions and cancel out in the mean).
func shown(c Change) bool { return c.Delta != 0 || c.Verdict == Better || c.Verdict == Worse }

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

// Tally counts the changes Compare showed by verdict.
type Tally struct {
	// Better, Worse, WithinNoise and Undecided count the figures Compare
	// showed with each verdict.
	Better, Worse, WithinNoise, Undecided int
	// SeedsNeeded is the most seeds a side an undecided change needs.
	SeedsNeeded int
}

func (v *Tally) count(c Change) {
	switch c.Verdict {
	case Better:
		v.Better++
	case Worse:
		v.Worse++
	case WithinNoise:
		v.WithinNoise++
	case Undecided:
		v.Undecided++
		v.SeedsNeeded = max(v.SeedsNeeded, c.SeedsNeeded)
	}
}

// write ends a comparison with the counts.
func (v Tally) write(sb *strings.Builder) {
	fmt.Fprintf(sb, "\n%d better, %d worse", v.Better, v.Worse)
	if v.WithinNoise > 0 {
		fmt.Fprintf(sb, ", %d within noise", v.WithinNoise)
	}
	switch {
	case v.Undecided > 0 && v.SeedsNeeded > judge.MaxSeeds:
		fmt.Fprintf(sb, ", %d undecided (some need more than %s seeds a side)", v.Undecided, count(judge.MaxSeeds))
	case v.Undecided > 0:
		fmt.Fprintf(sb, ", %d undecided (--seeds %d on both sides would decide them)", v.Undecided, v.SeedsNeeded)
	}
	sb.WriteString("\n")
}

// needsText says how many seeds a side an undecided change needs:
// "needs ≥ 7 seeds a side", "needs more than 10,000 seeds a side".
func needsText(n int) string {
	if n > judge.MaxSeeds {
		return fmt.Sprintf("needs more than %s seeds a side", count(judge.MaxSeeds))
	}
	return fmt.Sprintf("needs ≥ %s seeds a side", count(float64(n)))
}

// verdictText is a change's verdict as its row shows it.
func verdictText(c Change) string {
	if c.Verdict == Undecided {
		return "undecided: " + needsText(c.SeedsNeeded)
	}
	return c.Verdict
}

// changeTable lays out the changes that are shown, a row each, the
// strategy named on its first; a strategy with no change gets one row
// saying so. It counts the verdicts of the rows.
func changeTable(all []Change, format map[string]func(float64) string) (*textTable, Tally) {
	// The interval column only when some row has one (not for one seed a
	// side).
	withIv := slices.ContainsFunc(all, func(c Change) bool { return shown(c) && intervalText(c, format[c.Metric]) != "" })
	t := &textTable{aligns: []align{alignLeft, alignLeft, alignRight, alignRight, alignRight, alignRight, alignLeft, alignLeft}}
	row := func(cells ...cell) {
		if !withIv && len(cells) == 8 {
			cells = append(cells[:6], cells[7])
		}
		t.add(cells...)
	}
	row(cell{text: "strategy"}, cell{text: "metric"}, cell{text: "old"}, cell{text: "new"}, cell{text: "delta"}, cell{text: "%"}, cell{text: "95% interval"}, cell{text: ""})
	var n Tally
	changed := map[string]bool{}
	for _, c := range all {
		changed[c.Strategy] = changed[c.Strategy] || shown(c)
	}
	seen := map[string]bool{}
	for _, c := range all {
		if !changed[c.Strategy] && !seen[c.Strategy] {
			t.add(cell{text: c.Strategy}, cell{text: "no change"})
			seen[c.Strategy] = true
		}
		if !shown(c) {
			continue
		}
		name := ""
		if !seen[c.Strategy] {
			name = c.Strategy
		}
		seen[c.Strategy] = true
		f := format[c.Metric]
		row(cell{text: name}, cell{text: c.Metric}, cell{text: f(c.Old)}, cell{text: f(c.New)},
			cell{text: deltaText(c.Delta, f)}, cell{text: percentText(c.Percent)}, cell{text: intervalText(c, f)}, cell{text: verdictText(c)})
		n.count(c)
	}
	return t, n
}

// intervalText writes a change's 95% interval: in percent of the old value
// ("+15.2% … +22.1%"), in the metric's unit when the old value is 0, and
// nothing when there is none (one seed a side, an infinite figure).
func intervalText(c Change, f func(float64) string) string {
	switch {
	case math.IsNaN(c.Lo) || math.IsNaN(c.Hi) || math.IsInf(c.Delta, 0):
		return ""
	case c.Lo == c.Hi && c.Lo == c.Delta:
		return "" // one seed a side: the delta is the effect, no interval
	case !math.IsNaN(c.PercentLo):
		return percentText(c.PercentLo) + " … " + percentText(c.PercentHi)
	}
	return deltaText(c.Lo, f) + " … " + deltaText(c.Hi, f)
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
		w := fmt.Sprintf("warning: different seeds (%s, %s): a change counts when Welch's t-test over the seeds finds it significant (5%% family-wise over every metric)", seedsText(seedsOf(a)), seedsText(seedsOf(b)))
		if len(seedsOf(a)) < 2 || len(seedsOf(b)) < 2 {
			w += "; with one seed a side nothing tells a change from noise: run both with --seeds 5, or with the same --seed"
		}
		out = append(out, w)
	} else if len(seedsOf(a)) > 1 {
		out = append(out, fmt.Sprintf("same %s on both sides: each seed is compared with itself, and any change counts", seedsText(seedsOf(a))))
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
