package sim

import (
	"testing"
	"time"

	"github.com/simbench/simbench/internal/collect"
)

// A collector's timelines hold the window's buckets and no more, however
// late the times it is given: a live run at a time scale of 1e-5 turns
// each real second of lateness into 100,000 seconds of the scenario,
// which must not become 100,000 buckets. The timelines never reallocate
// (the live run grows them under a lock the Runners wait on), the
// attempts of the window's last instant keep a bucket of their own, and
// attempts after the window count in the totals but in no bucket.
func TestCollectorTimelineBoundedByWindow(t *testing.T) {
	tests := []struct {
		name   string
		window time.Duration
		bucket time.Duration // what newCollector picks: 1 s up to 1,200 s
	}{
		{"300 s", 300 * time.Second, time.Second},
		{"1,800 s in 2 s buckets", 1800 * time.Second, 2 * time.Second},
		{"2.5 s", 2500 * time.Millisecond, time.Second},
	}
	lateness := []time.Duration{0, time.Second, 100_000 * time.Second, 1_000_000 * time.Second}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := collect.NewCollector([]string{"a", "b"}, tt.window)
			// Buckets 0 to ⌊window ÷ bucket⌋: the last holds the window's end.
			want := int(tt.window/tt.bucket) + 1
			tl, svc := &c.Timeline, &c.SvcTimeline[1]
			if c.Bucket != tt.bucket {
				t.Fatalf("buckets of %v, want %v", c.Bucket, tt.bucket)
			}
			caps := [2]int{cap(*tl), cap(*svc)}
			c.Started(1, time.Second/2, true)
			c.Ended(1, time.Second/2, true)
			c.Started(1, tt.window, true)
			c.Ended(1, tt.window, false)
			for _, late := range lateness {
				at := tt.window + time.Nanosecond + late
				c.Started(1, at, true)
				c.Ended(1, at, true)
			}
			if len(*tl) != want || len(*svc) != want || len(c.SvcTimeline[0]) != 0 {
				t.Errorf("timelines of %d, %d and %d buckets; want %d, %d and 0", len(*tl), len(*svc), len(c.SvcTimeline[0]), want, want)
			}
			// Allocated up front, never grown: the capacities stay what
			// newCollector gave.
			if after := [2]int{cap(*tl), cap(*svc)}; caps != [2]int{want, want} || after != caps {
				t.Errorf("timelines' capacities %v, then %v; want %d throughout", caps, after, want)
			}
			if n := int64(2 + len(lateness)); c.Attempts != n || c.RateLimited != n-1 {
				t.Errorf("%d attempts, %d rate limited; want %d and %d", c.Attempts, c.RateLimited, n, n-1)
			}
			var started, limited float64
			for _, p := range *tl {
				started += p.Started
				limited += p.RateLimited
			}
			if started != 2 || limited != 1 || (*tl)[want-1].Started != 1 || (*svc)[want-1].Started != 1 {
				t.Errorf("buckets count %v started (%v in the last) and %v rate limited; want 2 (1) and 1: the window's own attempts", started, (*tl)[want-1].Started, limited)
			}
		})
	}
}
