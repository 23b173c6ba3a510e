// Package gate decides whether a benchmark run is worse than a baseline,
// for CI: it reads two outputs of go test -bench with
// golang.org/x/perf/benchfmt, compares them unit by unit and prints a
// benchstat-like table with a verdict per row.
//
// Two kinds of units are compared differently:
//
//   - Deterministic units (the benchmark units of results' figure
//     registry: p95-turn-ms, 429s/op, goodput/s, …) come from virtual-time
//     simulations that give the same value on every run, so one run per
//     side decides them. Every run of a side must agree; the new value may
//     be worse than the baseline by at most the unit's tolerance.
//   - Noisy units (ns/op, B/op, allocs/op and any unit not in the table)
//     are compared as benchstat does, with benchmath's Mann-Whitney U test
//     at alpha 0.05: only a significant change of at least MinChange
//     counts, and only with at least MinRuns runs per side. With fewer the
//     row is undecided — reported, never silently passed.
//
// A benchmark or deterministic unit in the baseline that the new run lacks
// is missing data and fails the gate. Most callers want Parse, Compare,
// Report.WriteTable and Report.Err, in that order.
//
// The gate also holds a run to its thresholds: Thresholds gathers a
// scenario's [thresholds] and the --threshold flags, CheckThresholds
// checks results against them, and CheckValid refuses a run whose figures
// are marked invalid.
package gate

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Defaults of Options.
const (
	// DefaultMinChange is the smallest significant change of a noisy unit
	// that counts as a regression or an improvement: 10%.
	DefaultMinChange = 0.10
	// DefaultAlpha is the significance level of the Mann-Whitney U test,
	// benchstat's default.
	DefaultAlpha = 0.05
	// DefaultMinRuns is the fewest runs per side with which a noisy unit is
	// judged at all.
	DefaultMinRuns = 6
)

// Options tune the comparison of noisy units; the zero value uses the
// defaults. Deterministic units use the tolerance table only.
type Options struct {
	// MinChange is the smallest change, as a fraction of the baseline's
	// median (0.1 = 10%), that counts; zero means DefaultMinChange.
	MinChange float64
	// Alpha is the significance level; zero means DefaultAlpha.
	Alpha float64
	// MinRuns is the fewest runs per side to decide; zero means
	// DefaultMinRuns.
	MinRuns int
}

func (o Options) withDefaults() Options {
	if o.MinChange == 0 {
		o.MinChange = DefaultMinChange
	}
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.MinRuns == 0 {
		o.MinRuns = DefaultMinRuns
	}
	return o
}

// Verdict is the outcome of one row. Verdicts are ordered as the table
// lists them: failures first.
type Verdict int

const (
	// Regression: worse beyond the tolerance (deterministic) or
	// significantly worse by at least MinChange (noisy), or a
	// deterministic unit whose new runs disagree. Exit code 1.
	Regression Verdict = iota
	// Missing: in the baseline, not in the new run (a whole benchmark or a
	// deterministic unit), or a deterministic unit whose baseline runs
	// disagree. Exit code 2.
	Missing
	// Improvement: better (deterministic: at all; noisy: significantly and
	// by at least MinChange).
	Improvement
	// Undecided: a noisy unit without enough runs to judge, or missing
	// from the new run. Reported, does not fail.
	Undecided
	// New: in the new run only. Passes.
	New
	// Unchanged: equal, within tolerance, or no significant change of at
	// least MinChange.
	Unchanged
)

// String returns the word the table prints.
func (v Verdict) String() string {
	switch v {
	case Regression:
		return "REGRESSION"
	case Missing:
		return "MISSING"
	case Improvement:
		return "improvement"
	case Undecided:
		return "undecided"
	case New:
		return "new"
	case Unchanged:
		return "unchanged"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Row is one benchmark × unit of the comparison.
type Row struct {
	// Benchmark is the name without the GOMAXPROCS suffix, prefixed by the
	// last element of its package path when the output names it.
	Benchmark string
	// Unit is the unit as reported; empty for a row about a whole
	// benchmark (missing or new).
	Unit string
	// Old and New are the baseline and new values: the runs' common value
	// for a deterministic unit, the median for a noisy one; NaN when that
	// side has none.
	Old, New float64
	// OldRuns and NewRuns count the runs of each side.
	OldRuns, NewRuns int
	// Delta is (New-Old)/Old; +Inf when Old is 0 and New is not, NaN when
	// a side is missing.
	Delta float64
	// Deterministic is true for units in the tolerance table.
	Deterministic bool
	// Verdict is the row's outcome.
	Verdict Verdict
	// Note explains the verdict: the limit that was crossed, the p-value,
	// why a row could not be decided.
	Note string

	insignificant bool // noisy, and the U test found no difference
}

// Report is the outcome of Compare. Rows are sorted by Verdict (regressions
// first), then in the baseline's order.
type Report struct {
	// Rows holds one row per benchmark × unit, sorted as above.
	Rows []Row
	// Options are the options used, defaults filled in.
	Options Options
}

// Compare compares a new run against a baseline. It never fails: problems
// with the data are rows (Missing, Undecided) and Report.Err says whether
// the gate passes.
func Compare(baseline, current *Set, opt Options) *Report {
	opt = opt.withDefaults()
	r := &Report{Options: opt}
	for _, ob := range baseline.benches {
		nb := current.index[ob.pkg+"\x00"+ob.name]
		if nb == nil {
			r.Rows = append(r.Rows, Row{
				Benchmark: ob.display(), Old: math.NaN(), New: math.NaN(), Delta: math.NaN(),
				Verdict: Missing, Note: "benchmark not in " + current.File,
			})
			continue
		}
		for _, unit := range ob.units {
			r.Rows = append(r.Rows, compareUnit(ob.display(), unit, ob.values[unit], nb.values[unit], current.File, opt))
		}
		for _, unit := range nb.units {
			if _, ok := ob.values[unit]; !ok {
				vals := nb.values[unit]
				r.Rows = append(r.Rows, Row{
					Benchmark: ob.display(), Unit: unit, Old: math.NaN(), New: center(unit, vals),
					NewRuns: len(vals), Delta: math.NaN(), Verdict: New, Note: "unit not in baseline",
				})
			}
		}
	}
	for _, nb := range current.benches {
		if baseline.index[nb.pkg+"\x00"+nb.name] == nil {
			r.Rows = append(r.Rows, Row{
				Benchmark: nb.display(), Old: math.NaN(), New: math.NaN(), Delta: math.NaN(),
				Verdict: New, Note: "benchmark not in baseline",
			})
		}
	}
	slices.SortStableFunc(r.Rows, func(a, b Row) int { return cmp.Compare(a.Verdict, b.Verdict) })
	return r
}

// compareUnit judges one unit of one benchmark.
func compareUnit(name, unit string, old, cur []float64, curFile string, opt Options) Row {
	tol, det := Lookup(unit)
	row := Row{
		Benchmark: name, Unit: unit, Deterministic: det,
		Old: center(unit, old), New: center(unit, cur),
		OldRuns: len(old), NewRuns: len(cur),
	}
	row.Delta = delta(row.Old, row.New)
	switch {
	case len(cur) == 0 && det:
		row.Verdict, row.Note = Missing, "deterministic unit not in "+curFile
	case len(cur) == 0:
		row.Verdict, row.Note = Undecided, "unit not in "+curFile
	case det:
		judgeExact(&row, tol, old, cur)
	default:
		judgeNoisy(&row, noisyBetter(unit), old, cur, opt)
	}
	return row
}

// judgeExact compares a deterministic unit against its tolerance.
func judgeExact(row *Row, tol Tolerance, old, cur []float64) {
	if lo, hi := slices.Min(old), slices.Max(old); lo != hi {
		row.Verdict = Missing
		row.Note = fmt.Sprintf("baseline runs disagree (%s to %s): not deterministic, refresh the baseline", formatValue(lo), formatValue(hi))
		return
	}
	if lo, hi := slices.Min(cur), slices.Max(cur); lo != hi {
		row.Verdict = Regression
		row.Note = fmt.Sprintf("new runs disagree (%s to %s): no longer deterministic", formatValue(lo), formatValue(hi))
		return
	}
	o, n := old[0], cur[0]
	worse := n - o
	if tol.Better == HigherIsBetter {
		worse = o - n
	}
	limit := limitText(tol)
	switch {
	case worse > tol.MaxWorse*math.Abs(o):
		row.Verdict, row.Note = Regression, "beyond "+limit
	case worse < 0:
		row.Verdict = Improvement
	case worse > 0:
		row.Verdict, row.Note = Unchanged, "within "+limit
	default:
		row.Verdict = Unchanged
	}
}

// limitText says a tolerance in words: "limit +2%", "limit -1%", "may not rise".
func limitText(tol Tolerance) string {
	switch {
	case tol.MaxWorse == 0 && tol.Better == LowerIsBetter:
		return "limit: may not rise"
	case tol.MaxWorse == 0:
		return "limit: may not fall"
	case tol.Better == LowerIsBetter:
		return fmt.Sprintf("limit +%g%%", tol.MaxWorse*100)
	}
	return fmt.Sprintf("limit -%g%%", tol.MaxWorse*100)
}

// judgeNoisy compares a noisy unit with the Mann-Whitney U test.
func judgeNoisy(row *Row, better Direction, old, cur []float64, opt Options) {
	if len(old) < opt.MinRuns || len(cur) < opt.MinRuns {
		n := fmt.Sprint(len(old))
		if len(old) != len(cur) {
			n = fmt.Sprintf("%d+%d", len(old), len(cur))
		}
		row.Verdict = Undecided
		row.Note = fmt.Sprintf("not enough runs (n=%s, need %d)", n, opt.MinRuns)
		return
	}
	thr := benchmath.DefaultThresholds
	thr.CompareAlpha = opt.Alpha
	c := benchmath.AssumeNothing.Compare(
		benchmath.NewSample(slices.Clone(old), &thr),
		benchmath.NewSample(slices.Clone(cur), &thr))
	stat := fmt.Sprintf("p=%.3f n=%d+%d", c.P, c.N1, c.N2)
	worse := row.Delta
	if better == HigherIsBetter {
		worse = -worse
	}
	switch {
	case c.P >= c.Alpha:
		row.Verdict, row.Note, row.insignificant = Unchanged, "no significant change, "+stat, true
	case math.Abs(row.Delta) < opt.MinChange:
		row.Verdict = Unchanged
		row.Note = fmt.Sprintf("significant but under the %g%% minimum, %s", opt.MinChange*100, stat)
	case worse > 0:
		row.Verdict, row.Note = Regression, stat
	default:
		row.Verdict, row.Note = Improvement, stat
	}
}

// center is the value a row shows: the first run's for a deterministic
// unit (all runs agree or the row says they do not), the median for a
// noisy one, NaN without runs.
func center(unit string, vals []float64) float64 {
	if len(vals) == 0 {
		return math.NaN()
	}
	if _, det := Lookup(unit); det {
		return vals[0]
	}
	thr := benchmath.DefaultThresholds
	return benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(vals), &thr), 0.95).Center
}

// delta is the relative change from old to cur.
func delta(old, cur float64) float64 {
	switch {
	case math.IsNaN(old) || math.IsNaN(cur):
		return math.NaN()
	case old == cur:
		return 0
	case old == 0:
		return math.Inf(int(math.Copysign(1, cur)))
	}
	return (cur - old) / math.Abs(old)
}

// Sentinel errors of Report.Err, for errors.Is.
var (
	// ErrRegression: at least one row is a Regression.
	ErrRegression = errors.New("regression")
	// ErrMissingData: at least one row is Missing.
	ErrMissingData = errors.New("missing data")
)

// Summary counts a report's rows by verdict.
type Summary struct {
	// Regressions, Missing, … count the rows with that Verdict.
	Regressions, Missing, Improvements, Undecided, New, Unchanged int
	// MinRuns is the runs per side noisy units need (for the message).
	MinRuns int
}

// Summary counts the rows.
func (r *Report) Summary() Summary {
	s := Summary{MinRuns: r.Options.withDefaults().MinRuns}
	for _, row := range r.Rows {
		switch row.Verdict {
		case Regression:
			s.Regressions++
		case Missing:
			s.Missing++
		case Improvement:
			s.Improvements++
		case Undecided:
			s.Undecided++
		case New:
			s.New++
		case Unchanged:
			s.Unchanged++
		}
	}
	return s
}

// String is the summary line the gate prints last:
// "gate: 1 regression, 0 improvements, 270 unchanged, 99 undecided (need ≥6 runs)",
// followed by the missing and new counts when there are any.
func (s Summary) String() string {
	line := fmt.Sprintf("gate: %s, %s, %d unchanged, %d undecided (need ≥%d runs)",
		plural(s.Regressions, "regression"), plural(s.Improvements, "improvement"), s.Unchanged, s.Undecided, s.MinRuns)
	if s.Missing > 0 {
		line += fmt.Sprintf(", %d missing", s.Missing)
	}
	if s.New > 0 {
		line += fmt.Sprintf(", %d new", s.New)
	}
	return line
}

// Err says whether the gate passes: nil, or an error wrapping
// ErrMissingData when anything is missing (the run could not be judged in
// full; it takes precedence), else ErrRegression when anything regressed.
func (r *Report) Err() error {
	s := r.Summary()
	switch {
	case s.Missing > 0:
		return fmt.Errorf("gate: %w: %s missing or unusable, %s", ErrMissingData, plural(s.Missing, "row"), plural(s.Regressions, "regression"))
	case s.Regressions > 0:
		return fmt.Errorf("gate: %w: %s worse than the baseline", ErrRegression, plural(s.Regressions, "row"))
	}
	return nil
}

// plural is n and the word, with an s unless n is 1: "1 regression",
// "2 regressions".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
