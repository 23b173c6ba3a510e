package reports

import (
	"testing"

	"gonum.org/v1/plot/plotter"

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

// A start-up spike sets no axis: the top comes from the rest, and the spike
// is returned to be named; a series without one keeps its maximum.
func TestScaleTopClipsASpike(t *testing.T) {
	xys := make(plotter.XYs, 100)
	for i := range xys {
		xys[i] = plotter.XY{X: float64(i), Y: 100}
	}
	xys[0].Y = 640
	top, spike, clipped := scaleTop(xys, 0)
	if !clipped || top != 100 || spike.Y != 640 || spike.X != 0 {
		t.Errorf("top %v, spike %v, clipped %v: want 100 with the 640 at 0 named", top, spike, clipped)
	}
	xys[0].Y = 150
	if top, _, clipped := scaleTop(xys, 0); clipped || top != 150 {
		t.Errorf("top %v, clipped %v: want 150, nothing clipped", top, clipped)
	}
	// A spike under a level the panel draws anyway (a limit at 700) is on
	// the scale: nothing is clipped or named.
	xys[0].Y = 640
	if top, _, clipped := scaleTop(xys, 700); clipped || top != 700 {
		t.Errorf("under a floor of 700: top %v, clipped %v: want 700, nothing clipped", top, clipped)
	}
	// Above the floor's axis, the spike is still clipped, the axis at the floor.
	if top, _, clipped := scaleTop(xys, 200); !clipped || top != 200 {
		t.Errorf("over a floor of 200: top %v, clipped %v: want 200 with the spike clipped", top, clipped)
	}
}
