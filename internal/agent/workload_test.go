package agent

import (
	"strconv"
	"testing"
)

// TestClientName checks that the names cut from clientName's chunks are
// each call's number in base 36, across chunk boundaries and when the
// numbers go back (a second loop on the same workload), and where a chunk
// counts its names up past a power of 36 (one digit more).
func TestClientName(t *testing.T) {
	var w Workload
	for _, serials := range [][2]uint64{{1, 3 * NameChunk}, {NameChunk - 2, NameChunk + 2}, {1 << 40, 1<<40 + 10}, {36*36*36*36*36*36*36*36 - 300, 36*36*36*36*36*36*36*36 + 300}} {
		for n := serials[0]; n <= serials[1]; n++ {
			if got, want := w.ClientName(n), strconv.FormatUint(n, 36); got != want {
				t.Fatalf("clientName(%d) = %q, want %q", n, got, want)
			}
		}
	}
}

// TestCallSlicesSpare checks that a single call takes the spare storage
// once, that several calls take the storage of several once per turn and
// that it is kept, its capacity reused, for the next turn (as startTurn
// keeps it), and that more than maxKeptCalls are never kept.
func TestCallSlicesSpare(t *testing.T) {
	var own OneCall
	spare := CallSpare{One: &own}
	calls, metas := CallSlices(3, &spare)
	if len(calls) != 3 || len(metas) != 3 || spare.One != &own || !spare.ManyUsed || &spare.Many.Calls[0] != &calls[0] {
		t.Fatalf("three calls: %d calls, %d metas, spare taken %v, many kept %v", len(calls), len(metas), spare.One != &own, spare.ManyUsed)
	}
	again, _ := CallSlices(2, &spare)
	if &again[0] == &calls[0] {
		t.Fatal("a second part of several calls took the turn's storage again")
	}
	calls, metas = CallSlices(1, &spare)
	if &calls[0] != &own.Calls[0] || &metas[0] != &own.Metas[0] || spare.One != nil {
		t.Fatal("the first single call did not take the spare")
	}
	calls, _ = CallSlices(1, &spare)
	if &calls[0] == &own.Calls[0] {
		t.Fatal("the second single call took the spare again")
	}
	// The next turn: the storage of three calls serves two.
	next := CallSpare{Many: spare.Many}
	two, _ := CallSlices(2, &next)
	if len(two) != 2 || &two[0] != &spare.Many.Calls[0] {
		t.Fatal("the next turn did not reuse the storage of several calls")
	}
	big := CallSpare{}
	if calls, _ := CallSlices(MaxKeptCalls+1, &big); len(calls) != MaxKeptCalls+1 || big.Many != nil {
		t.Fatalf("%d calls were kept", len(calls))
	}
	if calls, _ := CallSlices(4, nil); len(calls) != 4 {
		t.Fatal("no spare: wrong length")
	}
}
