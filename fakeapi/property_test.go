package fakeapi

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/spec"
)

// TestLimiterWindowBound checks, for random arrivals and token counts, that
// the units admitted in any window (t-W, t] stay within what each algorithm
// promises: the limit for a sliding window, twice the limit for fixed
// windows (a window straddles two), capacity + limit for a token bucket.
func TestLimiterWindowBound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alg := rapid.SampledFrom([]spec.Algorithm{spec.TokenBucket, spec.FixedWindow, spec.SlidingWindow}).Draw(t, "alg")
		limit := rapid.Int64Range(1, 50).Draw(t, "limit")
		burst := rapid.Int64Range(0, 100).Draw(t, "burst")
		const window = time.Second
		l := newLimiter(alg, limit, window, burst)
		bound := limit
		switch alg {
		case spec.FixedWindow:
			bound = 2 * limit
		case spec.TokenBucket:
			bound = l.capacity + limit
		}
		type adm struct {
			t time.Duration
			n int64
		}
		var got []adm
		now := time.Duration(0)
		for range rapid.IntRange(1, 300).Draw(t, "arrivals") {
			now += time.Duration(rapid.Int64Range(0, int64(300*time.Millisecond)).Draw(t, "gap"))
			n := rapid.Int64Range(0, l.max()).Draw(t, "n")
			l.advance(now)
			if w := l.wait(now, n); w == 0 {
				l.take(now, n)
				got = append(got, adm{now, n})
			} else if w < 0 {
				t.Fatalf("wait(%d) = never with max %d", n, l.max())
			}
		}
		var sum int64
		lo := 0
		for _, a := range got {
			sum += a.n
			for got[lo].t <= a.t-window {
				sum -= got[lo].n
				lo++
			}
			if sum > bound {
				t.Fatalf("%s: %d units in the window ending %v, bound %d", alg, sum, a.t, bound)
			}
		}
	})
}
