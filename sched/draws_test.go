package sched

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// propertyChecks is how many random cases a property test runs (one
// subtest each).
const propertyChecks = 100

// draws is the seeded source of a property test's random choices. The sched
// module requires nothing beyond the standard library, not even for its
// tests, so the property tests that need the package's unexported state
// draw from this instead of a property-testing library: a failing case is
// replayed by its seed, not shrunk. Each integer is one of its range's ends
// a quarter of the time each, where off-by-one bugs live. Every choice is
// logged under its label, and the log is printed when the case fails.
type draws struct {
	r   *rand.Rand
	log []string
}

// forSeeds runs check once per seed 1…n, each in a subtest named
// "seed=N" with its own draws.
func forSeeds(t *testing.T, n int, check func(t *testing.T, g *draws)) {
	for seed := 1; seed <= n; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			g := &draws{r: rand.New(rand.NewPCG(uint64(seed), 0x5eed))}
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("draws: %s", strings.Join(g.log, ", "))
				}
			})
			check(t, g)
		})
	}
}

// intRange returns an int in [lo, hi], lo or hi a quarter of the time each.
func (g *draws) intRange(label string, lo, hi int) int {
	v := lo
	switch k := g.r.IntN(4); {
	case hi <= lo:
	case k == 0:
	case k == 1:
		v = hi
	default:
		v = lo + g.r.IntN(hi-lo+1)
	}
	g.log = append(g.log, fmt.Sprintf("%s=%d", label, v))
	return v
}

// zeroOr returns 0 half the time, else an int in [lo, hi].
func (g *draws) zeroOr(label string, lo, hi int) int {
	if g.r.IntN(2) == 0 {
		g.log = append(g.log, label+"=0")
		return 0
	}
	return g.intRange(label, lo, hi)
}

// bool returns true half the time.
func (g *draws) bool(label string) bool {
	v := g.r.IntN(2) == 0
	g.log = append(g.log, fmt.Sprintf("%s=%v", label, v))
	return v
}

// ints returns n ints drawn by intRange.
func (g *draws) ints(label string, n, lo, hi int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = g.intRange(fmt.Sprint(label, "[", i, "]"), lo, hi)
	}
	return out
}

// permutation returns 0, 1, …, n-1 in a random order.
func (g *draws) permutation(label string, n int) []int {
	p := g.r.Perm(n)
	g.log = append(g.log, fmt.Sprintf("%s=%v", label, p))
	return p
}

// sampledFrom returns one of xs, each as likely.
func sampledFrom[T any](g *draws, label string, xs []T) T {
	v := xs[g.r.IntN(len(xs))]
	g.log = append(g.log, fmt.Sprintf("%s=%v", label, v))
	return v
}
