//go:build long

package decision

import (
	"context"
	"testing"

	"github.com/simbench/simbench/scenarios"
)

// On every built-in scenario the decision with early stopping is the
// decision without it (sameDecision), with the load check.
func TestLongEarlyStopKeepsTheBuiltinDecisions(t *testing.T) {
	for _, info := range scenarios.List() {
		t.Run(info.Name, func(t *testing.T) {
			sc, err := scenarios.Builtin(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			o := Options{Rule: Rule{MaxShare: DefaultMaxRateLimitedShare}}
			a, err := Decide(context.Background(), sc, o)
			if err != nil {
				t.Fatal(err)
			}
			o.NoEarlyStop = true
			ref, err := Decide(context.Background(), sc, o)
			if err != nil {
				t.Fatal(err)
			}
			if n := sameDecision(t, info.Name, a, ref); n > 0 {
				t.Logf("%s: %d strategy as written stopped early: %s", info.Name, n, a.Decision.Sentence)
			}
		})
	}
}

// TestLongEarlyStopKeepsTheDecision is TestEarlyStopKeepsTheDecision over
// more generated scenarios.
func TestLongEarlyStopKeepsTheDecision(t *testing.T) {
	checkEarlyStop(t, 100, 7)
}
