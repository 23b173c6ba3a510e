//go:build long

package quota_test

import (
	"slices"
	"testing"
	"time"
)

// TestLongFailoverHungPeerWithinTwiceTimeout checks docs/library.md's promise
// against a hung peer: at the default timeouts, Reserve falls back within
// twice the peer's budget (a silent listener: the dial budget, 1 s; a
// SIGSTOPped server whose connections were open: the 250 ms timeout). A wall-clock bound, so behind the
// long tag: on a loaded machine the median of five tries is judged.
func TestLongFailoverHungPeerWithinTwiceTimeout(t *testing.T) {
	for _, tt := range hungPeers {
		t.Run(tt.name, func(t *testing.T) {
			next := tt.failover(t)
			var took [5]int64
			for i := range took {
				took[i] = int64(fallBack(t, next()))
			}
			slices.Sort(took[:])
			if m := took[len(took)/2]; m > int64(2*tt.budget) {
				t.Fatalf("median fallback %v (of %v), want at most %v", time.Duration(m), took, 2*tt.budget)
			}
		})
	}
}
