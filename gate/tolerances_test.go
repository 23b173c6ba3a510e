package gate

import (
	"testing"

	"github.com/simbench/simbench/results"
)

// The gate judges each benchmark unit in the direction results' registry
// gives its figure, with the registry's tolerance, and has no
// deterministic unit the registry lacks.
func TestTolerancesFollowRegistry(t *testing.T) {
	want := map[results.Better]Direction{results.Lower: LowerIsBetter, results.Higher: HigherIsBetter}
	figs := results.BenchFigures()
	for _, f := range figs {
		dir, directed := want[f.Better]
		tol, ok := Lookup(f.Bench)
		if !ok || !directed || tol.Better != dir || tol.MaxWorse != f.MaxWorse {
			t.Errorf("%s (%s): gate %+v, %v; registry better %v, max worse %g", f.Bench, f.Key, tol, ok, f.Better, f.MaxWorse)
		}
	}
	if d := Deterministic(); len(d) != len(figs) {
		t.Errorf("%d deterministic units, %d benchmark figures in the registry", len(d), len(figs))
	}
}
