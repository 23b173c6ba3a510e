package sim

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

func TestHistogramQuantilesWithinPrecision(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := newHistogram()
	var all []time.Duration
	for range 100_000 {
		d := time.Duration(rng.ExpFloat64() * float64(300*time.Millisecond))
		h.add(d)
		all = append(all, d)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	for _, q := range []float64{0.5, 0.9, 0.95, 0.99} {
		exact := all[int(math.Ceil(q*float64(len(all))))-1]
		got := h.quantile(q)
		if rel := math.Abs(float64(got-exact)) / float64(exact); rel > 0.008 {
			t.Errorf("q%.2f: got %v, exact %v (%.2f%% off)", q, got, exact, rel*100)
		}
	}
	if h.max != all[len(all)-1] || h.quantile(1) != h.max {
		t.Errorf("max %v, q1 %v, want %v", h.max, h.quantile(1), all[len(all)-1])
	}
	cdf := h.cdf(100)
	if len(cdf) < 50 || cdf[len(cdf)-1].P != 1 {
		t.Errorf("cdf has %d points, last %+v", len(cdf), cdf[len(cdf)-1])
	}
	for i := 1; i < len(cdf); i++ {
		if cdf[i].Ms < cdf[i-1].Ms || cdf[i].P <= cdf[i-1].P {
			t.Fatalf("cdf not increasing at %d: %+v %+v", i, cdf[i-1], cdf[i])
		}
	}
}
