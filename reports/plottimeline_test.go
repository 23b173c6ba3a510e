package reports

import (
	"testing"

	"github.com/simbench/simbench/results"
)

// A bucket the end of the run cuts short is not drawn: it would read as a
// drop to 0.
func TestRunTimelineDropsTheCutBucket(t *testing.T) {
	r := &results.Results{DurationS: 3}
	s := &results.StrategyResult{Timeline: []results.TimelinePoint{
		{T: 0, BucketS: 1, InFlight: 5}, {T: 1, BucketS: 1, InFlight: 5}, {T: 2, BucketS: 1, InFlight: 5}, {T: 3, BucketS: 1, InFlight: 0},
	}}
	if got := runTimeline(r, s); len(got) != 3 || got[2].T != 2 {
		t.Errorf("timeline %+v: want the buckets of 0, 1 and 2 s", got)
	}
}

// Buckets with no 429 are not shaded as saturated, however close to the
// limit they run.
func TestSaturatedNeedsA429(t *testing.T) {
	got := saturated([]results.TimelinePoint{{Started: 166}, {Started: 170, RateLimited: 4}, {Started: 0}})
	if got[0] || !got[1] || got[2] {
		t.Errorf("saturated %v: want only the bucket with 429s", got)
	}
}
