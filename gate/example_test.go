package gate_test

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/simbench/simbench/gate"
)

// Compare a new run against a baseline: p95 rose 5% (the limit is 2%) and
// 429s appeared (they may not rise at all), so the gate fails. ns/op was
// measured once per side, which cannot decide a noisy unit: the row says
// so instead of passing.
func ExampleCompare() {
	baseline := `pkg: github.com/simbench/simbench
BenchmarkScenario/tier3/bounded-64-2  1  171893353 ns/op  3449 p95-turn-ms  0 429s/op  146.0 goodput/s
`
	current := `pkg: github.com/simbench/simbench
BenchmarkScenario/tier3/bounded-64-4  1  170112000 ns/op  3621 p95-turn-ms  112 429s/op  146.0 goodput/s
`
	old, err := gate.Parse(strings.NewReader(baseline), "bench/baseline.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	cur, err := gate.Parse(strings.NewReader(current), "bench/new.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	report := gate.Compare(old, cur, gate.Options{})
	if err := report.WriteTable(os.Stdout); err != nil {
		fmt.Println(err)
	}
	err = report.Err()
	fmt.Println(err, errors.Is(err, gate.ErrRegression))
	// Output:
	// benchmark                                    unit         old        new        delta   verdict
	// simbench.BenchmarkScenario/tier3/bounded-64  p95-turn-ms  3449       3621       +4.99%  REGRESSION: beyond limit +2%
	// simbench.BenchmarkScenario/tier3/bounded-64  429s/op      0          112        +∞      REGRESSION: beyond limit: may not rise
	// simbench.BenchmarkScenario/tier3/bounded-64  ns/op        171893353  170112000  -1.04%  undecided: not enough runs (n=1, need 6)
	// simbench.BenchmarkScenario/tier3/bounded-64  goodput/s    146        146        +0.00%  unchanged
	// gate: 2 regressions, 0 improvements, 1 unchanged, 1 undecided (need ≥6 runs)
	// gate: regression: 2 rows worse than the baseline true
}
