//go:build long

package decision

import "testing"

// TestLongDecisionProperty is TestDecisionProperty over 500 generated
// scenarios.
func TestLongDecisionProperty(t *testing.T) {
	checkDecisionProperty(t, 500)
}
