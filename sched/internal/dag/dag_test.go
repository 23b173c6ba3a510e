package dag

import (
	"slices"
	"testing"
)

// find runs FindCycle on a graph given as adjacency lists.
func find(g [][]int) []int {
	return FindCycle(len(g), func(i int) int { return len(g[i]) }, func(i, k int) int { return g[i][k] })
}

func TestFindCycle(t *testing.T) {
	if c := find([][]int{{1, 2}, {2}, {}, {0}}); c != nil {
		t.Errorf("a graph without a cycle: %v", c)
	}
	if c := find([][]int{{0}}); !slices.Equal(c, []int{0, 0}) {
		t.Errorf("a self-loop: %v, want [0 0]", c)
	}
	// 3 → 0 → 1 → 2 → 0: the walk from 0 finds 0, 1, 2, 0.
	if c := find([][]int{{1}, {2}, {0}, {0}}); !slices.Equal(c, []int{0, 1, 2, 0}) {
		t.Errorf("a three-cycle: %v, want [0 1 2 0]", c)
	}
	// A chain of 100,000 nodes into a cycle at its end: no stack overflow,
	// and every listed node has an edge to the next.
	n := 100_000
	g := make([][]int, n)
	for i := range n - 1 {
		g[i] = []int{i + 1}
	}
	g[n-1] = []int{n - 3}
	c := find(g)
	if len(c) != 4 || c[0] != c[len(c)-1] {
		t.Fatalf("the chain's cycle: %v", c)
	}
	for i := range len(c) - 1 {
		if !slices.Contains(g[c[i]], c[i+1]) {
			t.Errorf("%d has no edge to %d", c[i], c[i+1])
		}
	}
}
