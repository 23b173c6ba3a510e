//go:build long

package sim

import (
	"testing"
	"time"
)

// TestLongLittlesLawOnEveryBuiltin is TestLittlesLawOnEveryBuiltin on 2
// virtual minutes of every built-in (the whole of the shorter ones), long
// enough for their timed events.
func TestLongLittlesLawOnEveryBuiltin(t *testing.T) {
	checkLittlesLawOnEveryBuiltin(t, 2*time.Minute)
}

// TestLongEstimateOnEveryBuiltin is TestEstimateOnEveryBuiltin on 2 virtual
// minutes of every built-in.
func TestLongEstimateOnEveryBuiltin(t *testing.T) {
	checkEstimateOnEveryBuiltin(t, 2*time.Minute)
}
