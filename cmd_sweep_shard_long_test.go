//go:build long

package main

import "testing"

// The sharded tier3 decision sweep at the scenario's own duration equals
// the sweep in one piece, byte for byte.
func TestLongShardedSweepMatchesWhole(t *testing.T) {
	checkShardedSweep(t, 0)
}
