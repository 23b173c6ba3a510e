package sim

import (
	"strconv"
	"testing"
)

// TestClientName checks that the names cut from clientName's chunks are
// each call's number in base 36, across chunk boundaries and when the
// numbers go back (a second loop on the same workload).
func TestClientName(t *testing.T) {
	var w workload
	for _, serials := range [][2]uint64{{1, 3 * nameChunk}, {nameChunk - 2, nameChunk + 2}, {1 << 40, 1<<40 + 10}} {
		for n := serials[0]; n <= serials[1]; n++ {
			if got, want := w.clientName(n), strconv.FormatUint(n, 36); got != want {
				t.Fatalf("clientName(%d) = %q, want %q", n, got, want)
			}
		}
	}
}

// TestCallSlicesSpare checks that a single call takes the spare storage
// once, and that more calls never do.
func TestCallSlicesSpare(t *testing.T) {
	var own oneCall
	spare := &own
	calls, metas := callSlices(3, &spare)
	if len(calls) != 3 || len(metas) != 3 || spare != &own {
		t.Fatalf("three calls: %d calls, %d metas, spare taken %v", len(calls), len(metas), spare != &own)
	}
	calls, metas = callSlices(1, &spare)
	if &calls[0] != &own.calls[0] || &metas[0] != &own.metas[0] || spare != nil {
		t.Fatal("the first single call did not take the spare")
	}
	calls, _ = callSlices(1, &spare)
	if &calls[0] == &own.calls[0] {
		t.Fatal("the second single call took the spare again")
	}
}
