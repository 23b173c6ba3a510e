//go:build long

package sim

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestLongEngineProperties soaks the engine's properties on random
// scenarios of up to a minute (make test-long; make test runs it too).
func TestLongEngineProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) { checkEngineProperties(rt, randomScenarioUpTo(rt, time.Minute)) })
}
