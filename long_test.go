//go:build long

// Checks too slow to run under the race detector on every change: make
// test runs them without it (make test-long alone), and CI runs make test.

package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/scenarios"
)

// docs/decision.md's tier3 paragraph shows the decision line exactly as `run tier3`
// prints it with every default.
func TestLongReadmeShowsTier3Decision(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	d, err := decision.Decide(context.Background(), sc, decision.Options{Rule: rule(decision.DefaultMaxRateLimitedShare, decision.DefaultTolerance)})
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("docs/decision.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "\n"+d.Decision.Sentence+"\n") {
		t.Errorf("docs/decision.md does not show the decision as printed:\n%s", d.Decision.Sentence)
	}
}

// Everything a figure draws is in results.json, for every built-in
// scenario: `report` on a copy of it redraws each one's SVGs byte for byte.
func TestLongReportRoundTripsEveryScenario(t *testing.T) {
	for _, info := range scenarios.List() {
		t.Run(info.Name, func(t *testing.T) {
			t.Parallel() // rendering is single-threaded: use both cores
			reportRoundTrip(t, info.Name)
		})
	}
}

// TestLongDocSessions runs the documentation's sessions (TestDocSessions)
// in make test-long, without the race detector, which the race suite skips.
func TestLongDocSessions(t *testing.T) {
	docSessions(t)
}
