package gate

import (
	"strings"

	"github.com/simbench/simbench/results"
)

// Direction says which way a unit gets better.
type Direction int

const (
	// LowerIsBetter: a rise is worse (latency, 429s, ns/op, B/op).
	LowerIsBetter Direction = iota
	// HigherIsBetter: a fall is worse (goodput, calls/s).
	HigherIsBetter
)

// Tolerance is how far one deterministic unit may move in its worse
// direction before the gate calls it a regression.
type Tolerance struct {
	// Unit is the unit as the benchmark reports it (b.ReportMetric).
	Unit string
	// Better says which way the unit improves.
	Better Direction
	// MaxWorse is the largest change in the worse direction that still
	// passes, as a fraction of the baseline value: 0.02 lets the value
	// get 2% worse, 0 lets it not get worse at all. Against a baseline of
	// 0 any worsening is a regression.
	MaxWorse float64
}

// deterministic is the table of tolerances: the units the scenario
// benchmarks (bench_test.go, reportFigures) report from virtual-time runs,
// each with its direction and tolerance as results' figure registry gives
// them (FigureSpec.Bench, Better, MaxWorse). Those runs give the same
// value on every run of the same code, so the gate compares them exactly;
// the tolerance is how much worse a change of the code may make them
// before it counts as a regression. Any change in the better direction is
// an improvement.
//
// Every unit not in this table is noisy (ns/op, B/op, allocs/op, calls/s,
// …) and is compared statistically; see noisyBetter for its direction.
var deterministic = tolerances(results.BenchFigures())

// tolerances are the tolerances of the benchmark units of figs.
func tolerances(figs []results.FigureSpec) []Tolerance {
	out := make([]Tolerance, 0, len(figs))
	for _, f := range figs {
		out = append(out, Tolerance{Unit: f.Bench, Better: direction(f.Better), MaxWorse: f.MaxWorse})
	}
	return out
}

// direction is the gate's direction of a figure that improves b-wards. A
// neutral figure is compared as lower-is-better: a change of the code that
// moves it at all is worth a look.
func direction(b results.Better) Direction {
	if b == results.Higher {
		return HigherIsBetter
	}
	return LowerIsBetter
}

// Deterministic returns a copy of the tolerance table for deterministic
// units, in the registry's order.
func Deterministic() []Tolerance {
	return append([]Tolerance(nil), deterministic...)
}

// Lookup returns the tolerance of a deterministic unit; ok is false for a
// noisy unit.
func Lookup(unit string) (t Tolerance, ok bool) {
	for _, t := range deterministic {
		if t.Unit == unit {
			return t, true
		}
	}
	return Tolerance{}, false
}

// noisyBetter is the direction of a noisy unit: rates (a unit ending in
// "/s", such as calls/s or bare-req/s) and "ratio" (fakeapi's
// BenchmarkHTTPServer: fakeapi req/s over bare req/s) are better higher;
// everything else (ns/op, B/op, allocs/op, ns/call, …) is better lower.
func noisyBetter(unit string) Direction {
	if strings.HasSuffix(unit, "/s") || unit == "ratio" {
		return HigherIsBetter
	}
	return LowerIsBetter
}

// NonNegative reports whether a unit counts or measures something that
// cannot be below zero: every deterministic unit (429s, turns, latencies,
// goodput, …) and the testing package's ns/op, B/op, allocs/op and MB/s.
// A negative value of such a unit is invalid data, never an improvement.
func NonNegative(unit string) bool {
	if _, ok := Lookup(unit); ok {
		return true
	}
	switch unit {
	case "ns/op", "B/op", "allocs/op", "MB/s":
		return true
	}
	return false
}
