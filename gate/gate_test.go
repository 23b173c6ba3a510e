package gate

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
)

// output is Go benchmark output for one package with the given result
// lines, as go test -bench prints it.
func output(lines ...string) string {
	return "goos: linux\ngoarch: amd64\npkg: github.com/simbench/simbench\ncpu: test\n" +
		strings.Join(lines, "\n") + "\nPASS\nok  \tgithub.com/simbench/simbench\t1.0s\n"
}

// runs repeats a benchmark line n times, the i-th with the metrics line(i)
// returns ("123 ns/op 4 p95-turn-ms").
func runs(n int, name string, line func(i int) string) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s \t1\t%s", name, line(i)))
	}
	return out
}

func mustParse(t *testing.T, text, file string) *Set {
	t.Helper()
	s, err := Parse(strings.NewReader(text), file)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// compareText parses both outputs and compares them with default options.
func compareText(t *testing.T, old, cur string) *Report {
	t.Helper()
	return Compare(mustParse(t, old, "baseline.txt"), mustParse(t, cur, "new.txt"), Options{})
}

// row finds the report's row for a benchmark and unit.
func row(t *testing.T, r *Report, bench, unit string) Row {
	t.Helper()
	for _, row := range r.Rows {
		if row.Benchmark == bench && row.Unit == unit {
			return row
		}
	}
	t.Fatalf("no row %s %s in %+v", bench, unit, r.Rows)
	return Row{}
}

func table(t *testing.T, r *Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

const tier3 = "BenchmarkScenario/tier3/bounded-64-2"

func TestDeterministicTolerances(t *testing.T) {
	tests := []struct {
		unit     string
		old, new float64
		want     Verdict
	}{
		{"p50-turn-ms", 1000, 1019, Unchanged},    // +1.9%: within +2%
		{"p95-turn-ms", 1000, 1021, Regression},   // +2.1%: beyond +2%
		{"p99-turn-ms", 1000, 950, Improvement},   // any fall is better
		{"p95-turn-ms", 0, 1, Regression},         // from zero, any rise
		{"429s/op", 0, 1, Regression},             // may not rise at all
		{"429s/op", 500, 501, Regression},         // not even by 0.2%
		{"429s/op", 500, 500, Unchanged},          // equal
		{"write-races", 0, 1, Regression},         // may not rise
		{"early-retries", 10, 11, Regression},     // may not rise
		{"failed-calls", 3, 2, Improvement},       // fewer failures
		{"goodput/s", 100, 99.1, Unchanged},       // -0.9%: within -1%
		{"goodput/s", 100, 98.9, Regression},      // -1.1%: beyond -1%
		{"goodput/s", 100, 120, Improvement},      // higher is better
		{"wasted-s", 100, 100.9, Unchanged},       // +0.9%: within +1%
		{"wasted-s", 100, 101.1, Regression},      // +1.1%: beyond +1%
		{"attempts/call", 1.5, 1.52, Regression},  // +1.3%: beyond +1%
		{"attempts/call", 1.5, 1.505, Unchanged},  // +0.3%: within +1%
		{"attempts/call", 1.5, 1.2, Improvement},  // fewer retries
		{"p50-turn-ms", 1000, 1000, Unchanged},    // equal
		{"failed-calls", 0, 0, Unchanged},         // zero stays zero
		{"wasted-s", 0, 0.001, Regression},        // from zero, any rise
		{"goodput/s", 0, 0, Unchanged},            // degenerate but equal
		{"p99-turn-ms", 2000, 2039.9, Unchanged},  // +1.995%
		{"p99-turn-ms", 2000, 2040.1, Regression}, // +2.005%
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%g-%g", tt.unit, tt.old, tt.new), func(t *testing.T) {
			r := compareText(t,
				output(fmt.Sprintf("%s 1 %g %s", tier3, tt.old, tt.unit)),
				output(fmt.Sprintf("%s 1 %g %s", tier3, tt.new, tt.unit)))
			got := row(t, r, "simbench.BenchmarkScenario/tier3/bounded-64", tt.unit)
			if got.Verdict != tt.want {
				t.Errorf("verdict %v (%s), want %v", got.Verdict, got.Note, tt.want)
			}
			if !got.Deterministic {
				t.Errorf("%s not treated as deterministic", tt.unit)
			}
		})
	}
}

// A deliberately worse scheduler: p95 up 5%, 429s up from 0. The gate fails
// with ErrRegression and the table names both rows, first.
func TestWorseSchedulerIsARegression(t *testing.T) {
	old := output(tier3 + " 1 171893353 ns/op 3449 p95-turn-ms 0 429s/op 146.0 goodput/s 66226840 B/op 330153 allocs/op")
	cur := output(tier3 + " 1 170000000 ns/op 3621 p95-turn-ms 112 429s/op 146.0 goodput/s 66226840 B/op 330153 allocs/op")
	r := compareText(t, old, cur)

	err := r.Err()
	if !errors.Is(err, ErrRegression) {
		t.Fatalf("Err() = %v, want ErrRegression", err)
	}
	if errors.Is(err, ErrMissingData) {
		t.Errorf("Err() = %v, nothing is missing", err)
	}
	out := table(t, r)
	lines := strings.Split(out, "\n")
	for i, want := range []string{
		`^simbench.BenchmarkScenario/tier3/bounded-64 +p95-turn-ms +3449 +3621 +\+4\.99% +REGRESSION: beyond limit \+2%$`,
		`^simbench.BenchmarkScenario/tier3/bounded-64 +429s/op +0 +112 +\+∞ +REGRESSION: beyond limit: may not rise$`,
	} {
		if !matches(want, lines[i+1]) {
			t.Errorf("table line %d = %q, want it to match %s\n%s", i+1, lines[i+1], want, out)
		}
	}
	if want := "gate: 2 regressions, 0 improvements, 1 unchanged, 3 undecided (need ≥6 runs)\n"; !strings.HasSuffix(out, want) {
		t.Errorf("table does not end in %q:\n%s", want, out)
	}
}

func TestMissingData(t *testing.T) {
	both := tier3 + " 1 100 ns/op 3449 p95-turn-ms 0 429s/op"
	tests := []struct {
		name     string
		old, new string
		bench    string
		unit     string
		wantNote string
	}{
		{
			name:     "benchmark",
			old:      output(both, "BenchmarkScenario/tier3/unbounded-2 1 100 ns/op 1030 p95-turn-ms"),
			new:      output(both),
			bench:    "simbench.BenchmarkScenario/tier3/unbounded",
			wantNote: "benchmark not in new.txt",
		},
		{
			name:     "deterministic metric",
			old:      output(both),
			new:      output(tier3 + " 1 100 ns/op 3449 p95-turn-ms"),
			bench:    "simbench.BenchmarkScenario/tier3/bounded-64",
			unit:     "429s/op",
			wantNote: "deterministic unit not in new.txt",
		},
		{
			name:     "baseline runs disagree",
			old:      output(both, tier3+" 1 100 ns/op 3450 p95-turn-ms 0 429s/op"),
			new:      output(both),
			bench:    "simbench.BenchmarkScenario/tier3/bounded-64",
			unit:     "p95-turn-ms",
			wantNote: "baseline runs disagree (3449 to 3450): not deterministic, refresh the baseline",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := compareText(t, tt.old, tt.new)
			if err := r.Err(); !errors.Is(err, ErrMissingData) {
				t.Fatalf("Err() = %v, want ErrMissingData", err)
			}
			got := row(t, r, tt.bench, tt.unit)
			if got.Verdict != Missing || got.Note != tt.wantNote {
				t.Errorf("row %v %q, want MISSING %q", got.Verdict, got.Note, tt.wantNote)
			}
			if first := r.Rows[0]; first.Benchmark != got.Benchmark || first.Unit != got.Unit {
				t.Errorf("missing row is not first: %+v", r.Rows[0])
			}
			if s := r.Summary().String(); !strings.HasSuffix(s, ", 1 missing") {
				t.Errorf("summary %q does not count the missing row", s)
			}
		})
	}
}

func TestMissingNoisyUnitIsUndecided(t *testing.T) {
	r := compareText(t,
		output(tier3+" 1 100 ns/op 5 B/op 3449 p95-turn-ms"),
		output(tier3+" 1 100 ns/op 3449 p95-turn-ms"))
	got := row(t, r, "simbench.BenchmarkScenario/tier3/bounded-64", "B/op")
	if got.Verdict != Undecided || got.Note != "unit not in new.txt" {
		t.Errorf("row %v %q, want undecided", got.Verdict, got.Note)
	}
	if err := r.Err(); err != nil {
		t.Errorf("Err() = %v, want nil", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{"empty", "", "gate: new.txt: no benchmark results"},
		{"only headers", output(), "gate: new.txt: no benchmark results"},
		{"bad value", output("BenchmarkX-2 1 abc ns/op"), "new.txt:5: parsing measurement: invalid syntax"},
		{"no unit", output("BenchmarkX-2 1 100"), "new.txt:5: missing units"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.give), "new.txt")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse error %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := Parse(strings.NewReader(""), "new.txt"); !errors.Is(err, ErrNoResults) {
		t.Errorf("empty input: %v, want ErrNoResults", err)
	}
}

func TestNoisyUnits(t *testing.T) {
	// base gives run i a value around v: ±1% spread so the U test sees
	// distributions, not constants.
	spread := func(v float64, i int) float64 { return v * (1 + 0.01*float64(i%3-1)) }
	tests := []struct {
		name      string
		n         int
		unit      string
		old, new  float64 // center values
		want      Verdict
		wantNote  string // prefix
		wantDelta string
	}{
		{"5% blip under the minimum", 6, "ns/op", 1000, 1050, Unchanged, "significant but under the 10% minimum, p=0.00", "+5.00%"},
		{"20% slower", 6, "ns/op", 1000, 1200, Regression, "p=0.00", "+20.00%"},
		{"20% faster", 6, "ns/op", 1000, 800, Improvement, "p=0.00", "-20.00%"},
		{"20% more allocs", 8, "allocs/op", 1000, 1200, Regression, "p=0.00", "+20.00%"},
		{"rate 20% lower", 6, "calls/s", 1000, 800, Regression, "p=0.00", "-20.00%"},
		{"rate 20% higher", 6, "calls/s", 1000, 1200, Improvement, "p=0.00", "+20.00%"},
		{"same", 6, "B/op", 1000, 1000, Unchanged, "no significant change, p=1.000", "~"},
		{"one run each", 1, "ns/op", 1000, 2000, Undecided, "not enough runs (n=1, need 6)", "+100.00%"},
		{"five runs each", 5, "ns/op", 1000, 2000, Undecided, "not enough runs (n=5, need 6)", "+100.00%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := compareText(t,
				output(runs(tt.n, "BenchmarkCore-2", func(i int) string { return fmt.Sprintf("%g %s", spread(tt.old, i), tt.unit) })...),
				output(runs(tt.n, "BenchmarkCore-2", func(i int) string { return fmt.Sprintf("%g %s", spread(tt.new, i), tt.unit) })...))
			got := row(t, r, "simbench.BenchmarkCore", tt.unit)
			if got.Verdict != tt.want || !strings.HasPrefix(got.Note, tt.wantNote) {
				t.Errorf("row %v %q, want %v %q…", got.Verdict, got.Note, tt.want, tt.wantNote)
			}
			if d := formatDelta(got); d != tt.wantDelta {
				t.Errorf("delta %s, want %s", d, tt.wantDelta)
			}
			if got.Deterministic {
				t.Errorf("%s treated as deterministic", tt.unit)
			}
		})
	}
}

// Too few runs of a noisy unit neither pass nor fail: the row says so, the
// summary counts it, and Err does not fail on it.
func TestFewRunsAreUndecidedNotPassed(t *testing.T) {
	r := compareText(t,
		output(tier3+" 1 100 ns/op 3449 p95-turn-ms"),
		output(tier3+" 1 300 ns/op 3449 p95-turn-ms"))
	if err := r.Err(); err != nil {
		t.Errorf("Err() = %v: an undecided row must not fail the gate", err)
	}
	out := table(t, r)
	if !matches(`simbench.BenchmarkScenario/tier3/bounded-64 +ns/op +100 +300 +\+200\.00% +undecided: not enough runs \(n=1, need 6\)`, out) {
		t.Errorf("table lacks the undecided row:\n%s", out)
	}
	if !strings.Contains(out, "gate: 0 regressions, 0 improvements, 1 unchanged, 1 undecided (need ≥6 runs)") {
		t.Errorf("summary does not count the undecided row:\n%s", out)
	}
}

func TestUnevenRunsNamed(t *testing.T) {
	r := compareText(t,
		output(runs(6, "BenchmarkCore-2", func(int) string { return "100 ns/op" })...),
		output(runs(2, "BenchmarkCore-2", func(int) string { return "100 ns/op" })...))
	if got := row(t, r, "simbench.BenchmarkCore", "ns/op"); got.Note != "not enough runs (n=6+2, need 6)" {
		t.Errorf("note %q", got.Note)
	}
}

func TestMinChangeOption(t *testing.T) {
	old := output(runs(6, "BenchmarkCore-2", func(i int) string { return fmt.Sprintf("%d ns/op", 1000+i) })...)
	cur := output(runs(6, "BenchmarkCore-2", func(i int) string { return fmt.Sprintf("%d ns/op", 1050+i) })...)
	r := Compare(mustParse(t, old, "a"), mustParse(t, cur, "b"), Options{MinChange: 0.03})
	if got := row(t, r, "simbench.BenchmarkCore", "ns/op"); got.Verdict != Regression {
		t.Errorf("+5%% with a 3%% minimum: %v %q, want REGRESSION", got.Verdict, got.Note)
	}
}

func TestNondeterministicNewRunsAreARegression(t *testing.T) {
	r := compareText(t,
		output(tier3+" 1 100 ns/op 3449 p95-turn-ms"),
		output(tier3+" 1 100 ns/op 3449 p95-turn-ms", tier3+" 1 100 ns/op 3400 p95-turn-ms"))
	got := row(t, r, "simbench.BenchmarkScenario/tier3/bounded-64", "p95-turn-ms")
	if got.Verdict != Regression || got.Note != "new runs disagree (3400 to 3449): no longer deterministic" {
		t.Errorf("row %v %q", got.Verdict, got.Note)
	}
}

// Deterministic units need no repetitions: six equal runs of the new side
// against one baseline run decide the same as one.
func TestDeterministicRunsAgree(t *testing.T) {
	r := compareText(t,
		output(tier3+" 1 3449 p95-turn-ms"),
		output(runs(6, tier3, func(int) string { return "3449 p95-turn-ms" })...))
	if got := row(t, r, "simbench.BenchmarkScenario/tier3/bounded-64", "p95-turn-ms"); got.Verdict != Unchanged || got.NewRuns != 6 {
		t.Errorf("row %+v", got)
	}
}

func TestNewBenchmarksAndUnitsPass(t *testing.T) {
	r := compareText(t,
		output(tier3+" 1 3449 p95-turn-ms"),
		output(tier3+" 1 3449 p95-turn-ms 0 write-races", "BenchmarkScenario/tier3/bounded-128-2 1 3000 p95-turn-ms"))
	if err := r.Err(); err != nil {
		t.Errorf("Err() = %v", err)
	}
	if got := row(t, r, "simbench.BenchmarkScenario/tier3/bounded-128", ""); got.Verdict != New {
		t.Errorf("new benchmark: %v", got.Verdict)
	}
	if got := row(t, r, "simbench.BenchmarkScenario/tier3/bounded-64", "write-races"); got.Verdict != New {
		t.Errorf("new unit: %v", got.Verdict)
	}
	if s := r.Summary().String(); s != "gate: 0 regressions, 0 improvements, 1 unchanged, 0 undecided (need ≥6 runs), 2 new" {
		t.Errorf("summary %q", s)
	}
}

// A baseline from a 2-core machine matches a run on 4 cores and one at
// GOMAXPROCS=1, where go test adds no suffix; names that end in a number
// (bounded-64) keep it.
func TestGOMAXPROCSSuffix(t *testing.T) {
	two := output("BenchmarkCore-2 1 100 ns/op", "BenchmarkScenario/tier3/bounded-64-2 1 3449 p95-turn-ms")
	tests := []struct {
		name string
		give string
	}{
		{"4 cores", output("BenchmarkCore-4 1 100 ns/op", "BenchmarkScenario/tier3/bounded-64-4 1 3449 p95-turn-ms")},
		{"GOMAXPROCS=1", output("BenchmarkCore 1 100 ns/op", "BenchmarkScenario/tier3/bounded-64 1 3449 p95-turn-ms")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := compareText(t, two, tt.give)
			if err := r.Err(); err != nil {
				t.Fatalf("Err() = %v\n%s", err, table(t, r))
			}
			if got := row(t, r, "simbench.BenchmarkScenario/tier3/bounded-64", "p95-turn-ms"); got.Verdict != Unchanged {
				t.Errorf("row %+v", got)
			}
		})
	}
}

// The same benchmark name in two packages is two benchmarks.
func TestPackagesKeptApart(t *testing.T) {
	text := func(sched, sim float64) string {
		return fmt.Sprintf("pkg: github.com/simbench/simbench/sched\nBenchmarkX-2 1 %g ns/op\npkg: github.com/simbench/simbench/sim\nBenchmarkX-2 1 %g ns/op\n", sched, sim)
	}
	s := mustParse(t, text(1, 2), "a")
	if s.Len() != 2 {
		t.Fatalf("Len() = %d, want 2", s.Len())
	}
	if got := s.Values("sim.BenchmarkX", "ns/op"); len(got) != 1 || got[0] != 2 {
		t.Errorf("sim.BenchmarkX ns/op = %v", got)
	}
}

func TestRowsOrderedByVerdict(t *testing.T) {
	r := compareText(t,
		output(
			"BenchmarkA-2 1 100 ns/op 10 p95-turn-ms",
			"BenchmarkB-2 1 10 p95-turn-ms",
			"BenchmarkC-2 1 10 p95-turn-ms",
			"BenchmarkD-2 1 10 429s/op"),
		output(
			"BenchmarkA-2 1 100 ns/op 9 p95-turn-ms",
			"BenchmarkC-2 1 10 p95-turn-ms",
			"BenchmarkD-2 1 11 429s/op",
			"BenchmarkE-2 1 1 p95-turn-ms"))
	var got []string
	for _, row := range r.Rows {
		got = append(got, row.Benchmark+" "+row.Verdict.String())
	}
	want := []string{
		"simbench.BenchmarkD REGRESSION",
		"simbench.BenchmarkB MISSING",
		"simbench.BenchmarkA improvement",
		"simbench.BenchmarkA undecided",
		"simbench.BenchmarkE new",
		"simbench.BenchmarkC unchanged",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestUnitsKeptAsWritten(t *testing.T) {
	s := mustParse(t, output("BenchmarkX-2 1 1500 ns/op 2.5 peak-heap-MB"), "a")
	if got := s.Values("simbench.BenchmarkX", "ns/op"); len(got) != 1 || got[0] != 1500 {
		t.Errorf("ns/op = %v, want [1500] (not benchfmt's sec/op)", got)
	}
	if got := s.Values("simbench.BenchmarkX", "peak-heap-MB"); len(got) != 1 || got[0] != 2.5 {
		t.Errorf("peak-heap-MB = %v", got)
	}
}

func TestTolerancesTable(t *testing.T) {
	for _, unit := range []string{"p50-turn-ms", "p95-turn-ms", "p99-turn-ms", "429s/op", "goodput/s", "wasted-s", "early-retries", "write-races", "failed-calls", "attempts/call"} {
		if _, ok := Lookup(unit); !ok {
			t.Errorf("%s has no tolerance", unit)
		}
	}
	for _, unit := range []string{"ns/op", "B/op", "allocs/op", "calls/s"} {
		if _, ok := Lookup(unit); ok {
			t.Errorf("%s is noisy but has a deterministic tolerance", unit)
		}
	}
	d := Deterministic()
	d[0].MaxWorse = 99
	if tol, _ := Lookup(d[0].Unit); tol.MaxWorse == 99 {
		t.Error("Deterministic returns the table itself, not a copy")
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		give float64
		want string
	}{
		{3449, "3449"},
		{171893353, "171893353"},
		{2.046, "2.046"},
		{0.52, "0.52"},
		{130.8, "130.8"},
		{12345.6, "12346"},
		{math.NaN(), "-"},
	}
	for _, tt := range tests {
		if got := formatValue(tt.give); got != tt.want {
			t.Errorf("formatValue(%g) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

// matches reports whether s has a line matching the regular expression.
func matches(pattern, s string) bool {
	return regexp.MustCompile("(?m)" + pattern).MatchString(s)
}

// A negative count of a unit that cannot be negative is invalid data: were
// it compared, 0 → -5 429s/op would be an improvement and pass.
func TestNegativeCountIsInvalid(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		{"BenchmarkScenario/tier3/bounded-64-2 1 100 ns/op -5 429s/op", "simbench.BenchmarkScenario/tier3/bounded-64: 429s/op is -5"},
		{"BenchmarkX-2 1 -100 ns/op", "simbench.BenchmarkX: ns/op is -100"},
		{"BenchmarkX-2 1 100 ns/op -1 failed-turns", "failed-turns is -1"},
	}
	for _, tt := range tests {
		_, err := Parse(strings.NewReader(output(tt.give)), "new.txt")
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "new.txt") {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tt.give, err, tt.want)
		}
	}
	// A unit the gate knows nothing about may be negative.
	if _, err := Parse(strings.NewReader(output("BenchmarkX-2 1 100 ns/op -3 delta-ms")), "new.txt"); err != nil {
		t.Errorf("a negative value of an unknown unit: %v", err)
	}
}

func TestSummarySingular(t *testing.T) {
	s := Summary{Regressions: 1, Improvements: 1, Unchanged: 1, Undecided: 1, MinRuns: 6}
	if got, want := s.String(), "gate: 1 regression, 1 improvement, 1 unchanged, 1 undecided (need ≥6 runs)"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
}
