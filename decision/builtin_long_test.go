//go:build long

package decision

import (
	"context"
	"testing"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// On every built-in scenario the decision answers no slower, beyond the
// rule's tolerance, than any strategy of the scenario that meets the rule,
// each run as written over the same seeds (the table of `run --seeds 3`).
func TestLongDecisionNoWorseThanTheTable(t *testing.T) {
	for _, info := range scenarios.List() {
		t.Run(info.Name, func(t *testing.T) {
			sc, err := scenarios.Builtin(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			rule := Rule{MaxShare: DefaultMaxRateLimitedShare}
			r, err := Decide(context.Background(), sc, Options{Rule: rule})
			if err != nil {
				t.Fatal(err)
			}
			noWorseThanWritten(t, sc, r.Decision, rule, sim.Options{Seeds: DefaultSeeds})
		})
	}
}
