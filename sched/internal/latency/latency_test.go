package latency

import (
	"testing"
	"time"
)

// TestPercentile checks the product-limit estimate against shares worked
// out by hand: with nothing censored the j-th smallest of n is at
// j/(n+1); a censored sample counts among those still running and is
// returned only when no answer's share reaches p.
func TestPercentile(t *testing.T) {
	ms := time.Millisecond
	w := NewWindow(9)
	for _, d := range []int{9, 3, 1, 7, 5, 2, 8, 4, 6} {
		w.Observe(time.Duration(d)*ms, false)
	}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{
		{0.5, 5 * ms},              // 5/10
		{0.55, 5*ms + ms/2},        // halfway from 5/10 to 6/10
		{0.05, 1 * ms},             // below the smallest's 1/10
		{0.95, 9 * ms},             // above the largest's 9/10: the largest
		{0.9, 9 * ms},              // exactly 9/10
		{0.45, 4*ms + ms/2},        // halfway from 4/10 to 5/10
		{0.1 + 0.1/4, 1*ms + ms/4}, // a quarter of the way from 1/10 to 2/10
	} {
		if got := w.Percentile(tt.p); got != tt.want {
			t.Errorf("p %v: %v, want %v", tt.p, got, tt.want)
		}
	}

	// Answers 1, 2, 3 ms and one censored at 10 ms: shares 1−4/5 = 0.2,
	// 1−(4/5)(3/4) = 0.4, 1−(4/5)(3/4)(2/3) = 0.6.
	c := NewWindow(4)
	c.Observe(10*ms, true)
	for _, d := range []time.Duration{3 * ms, 1 * ms, 2 * ms} {
		c.Observe(d, false)
	}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{{0.4 - 1e-9, 2 * ms}, {0.6 - 1e-9, 3 * ms}, {0.5, 2*ms + ms/2}, {0.9, 10 * ms}} {
		if got := c.Percentile(tt.p); got != tt.want {
			t.Errorf("censored, p %v: %v, want %v", tt.p, got, tt.want)
		}
	}
	// The ring keeps the last four: a fifth answer replaces the censored one.
	c.Observe(4*ms, false)
	if got, want := c.Percentile(0.7), 3*ms+ms/2; got != want || c.Len() != 4 {
		t.Errorf("after the ring turned: p 0.7 = %v (len %d), want %v", got, c.Len(), want)
	}
}
