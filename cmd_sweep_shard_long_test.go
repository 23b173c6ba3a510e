//go:build long

package main

import (
	"testing"
	"time"
)

// The sharded tier3 decision sweep at the scenario's own duration equals
// the sweep in one piece, byte for byte.
func TestLongShardedSweepMatchesWhole(t *testing.T) {
	checkShardedSweep(t, 0)
}

// checkShardedSweep checks that the merge of the shards writes the
// sweep.json, and prints the decision, of the sweep run in one piece.
func checkShardedSweep(t *testing.T, d time.Duration) {
	dirs, rounds := shardedSweep(t, d)
	checkShardedMerge(t, d, dirs, rounds)
}
