//go:build long

package sim

import (
	"context"
	"math"
	"testing"

	"github.com/simbench/simbench/scenarios"
)

// TestLongDemandWindowOnBuiltins holds Demand within 2% of the figure a
// simulation of the whole run gives, on every built-in scenario; and, so
// that more than the two built-ins Demand windows are checked, the
// shortest window's estimate too, on every built-in whose services' conditions
// do not change over the run and whose sessions do not end (a finite
// workload's rate falls as its sessions finish) nor a rare slow tail.
func TestLongDemandWindowOnBuiltins(t *testing.T) {
	ctx := context.Background()
	for _, info := range scenarios.List() {
		t.Run(info.Name, func(t *testing.T) {
			sc, err := scenarios.Builtin(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			c := unlimited(sc)
			whole, err := demand(ctx, c, Options{}, sc.Duration)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Demand(ctx, sc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("whole run %.4f turns/s, window %v %.4f (%+.2f%%)", whole, demandWindow(c), got, 100*(got/whole-1))
			if math.Abs(got/whole-1) > 0.02 {
				t.Errorf("Demand = %v turns/s, the whole run %v: more than 2%% apart", got, whole)
			}
			if len(sc.Events) > 0 || sc.Workload.Turns > 0 {
				return // conditions change, or sessions end: no steady rate
			}
			for _, svc := range sc.Services {
				if svc.Faults.SlowFirstByte.Rate > 0 {
					return // a rare tail: Demand's window holds demandSlowTurns of them
				}
			}
			short, err := demand(ctx, c, Options{}, minDemandWindow)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("window %v: %.4f (%+.2f%%)", minDemandWindow, short, 100*(short/whole-1))
			if math.Abs(short/whole-1) > 0.02 {
				t.Errorf("over %v: %v turns/s, the whole run %v: more than 2%% apart", minDemandWindow, short, whole)
			}
		})
	}
}
