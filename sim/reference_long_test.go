//go:build long

package sim

import "testing"

// TestLongReferenceMatches is TestReferenceMatches on 5,000 more
// generated scenarios, and 2,000 of runs up to a minute long.
func TestLongReferenceMatches(t *testing.T) {
	t.Run("short", func(t *testing.T) {
		checkReference(t, genScenario, referenceCases, referenceCases+5000)
	})
	t.Run("minute", func(t *testing.T) {
		checkReference(t, genScenarioUpTo(60_000), 0, 2000)
	})
}
