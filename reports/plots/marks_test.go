package plots

import (
	"testing"

	"gonum.org/v1/plot/plotter"
)

// A start-up spike sets no axis: the top comes from the rest, and the spike
// is returned to be named; a series without one keeps its maximum.
func TestScaleTopClipsASpike(t *testing.T) {
	xys := make(plotter.XYs, 100)
	for i := range xys {
		xys[i] = plotter.XY{X: float64(i), Y: 100}
	}
	xys[0].Y = 640
	top, spike, clipped := ScaleTop(xys, 0)
	if !clipped || top != 100 || spike.Y != 640 || spike.X != 0 {
		t.Errorf("top %v, spike %v, clipped %v: want 100 with the 640 at 0 named", top, spike, clipped)
	}
	xys[0].Y = 150
	if top, _, clipped := ScaleTop(xys, 0); clipped || top != 150 {
		t.Errorf("top %v, clipped %v: want 150, nothing clipped", top, clipped)
	}
	// A spike under a level the panel draws anyway (a limit at 700) is on
	// the scale: nothing is clipped or named.
	xys[0].Y = 640
	if top, _, clipped := ScaleTop(xys, 700); clipped || top != 700 {
		t.Errorf("under a floor of 700: top %v, clipped %v: want 700, nothing clipped", top, clipped)
	}
	// Above the floor's axis, the spike is still clipped, the axis at the floor.
	if top, _, clipped := ScaleTop(xys, 200); !clipped || top != 200 {
		t.Errorf("over a floor of 200: top %v, clipped %v: want 200 with the spike clipped", top, clipped)
	}
}
