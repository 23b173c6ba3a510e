//go:build long

package sim

import "testing"

// TestLongReferenceMatches is TestReferenceMatches on 5,000 more
// generated scenarios.
func TestLongReferenceMatches(t *testing.T) {
	checkReference(t, referenceCases, referenceCases+5000)
}
