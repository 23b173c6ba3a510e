package reports

import (
	"slices"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// series is n points of low noise with tall single-point spikes at the given indices.
func series(n int, spikes ...int) plotter.XYs {
	nz := noise(7)
	xys := make(plotter.XYs, n)
	for i := range xys {
		xys[i] = plotter.XY{X: float64(i), Y: 100 + 10*nz.next()}
	}
	for k, i := range spikes {
		xys[i].Y = 1000 + float64(k)
	}
	return xys
}

func TestDownsampleKeepsPeaks(t *testing.T) {
	spikes := []int{37, 1000, 2222, 3001, 4998}
	in := series(5000, spikes...)
	in[2500].Y = -50 // a trough
	out := Downsample(in, 200)
	if len(out) > 200 {
		t.Fatalf("%d points, want at most 200", len(out))
	}
	if len(out) < 150 {
		t.Errorf("only %d points of 200 used", len(out))
	}
	if out[0] != in[0] || out[len(out)-1] != in[len(in)-1] {
		t.Error("first or last point lost")
	}
	for _, i := range append(spikes, 2500) {
		if !slices.Contains(out, in[i]) {
			t.Errorf("point %d (%v) lost", i, in[i])
		}
	}
	// Every point is an input point, in input order.
	j := 0
	for _, p := range out {
		for j < len(in) && in[j] != p {
			j++
		}
		if j == len(in) {
			t.Fatalf("point %v is not in the input, or out of order", p)
		}
	}
}

func TestDownsampleShortSeriesUnchanged(t *testing.T) {
	in := series(50, 10)
	out := Downsample(in, 100)
	if !slices.Equal(out, in) {
		t.Error("a series that fits was changed")
	}
	out[0].Y = -1
	if in[0].Y == -1 {
		t.Error("Downsample returned its input, not a copy")
	}
}

func TestDownsampleSizes(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 5, 17, 101, 1000} {
		for _, maxPoints := range []int{0, 3, 4, 5, 10, 64} {
			out := Downsample(series(n), maxPoints)
			switch {
			case n <= maxPoints || maxPoints < 4:
				if len(out) != n {
					t.Errorf("n=%d max=%d: %d points, want all %d", n, maxPoints, len(out), n)
				}
			case len(out) > maxPoints:
				t.Errorf("n=%d max=%d: %d points", n, maxPoints, len(out))
			}
		}
	}
}

func TestDownsampleDeterministic(t *testing.T) {
	in := series(3000, 5, 2900)
	if !slices.Equal(Downsample(in, 300), Downsample(in, 300)) {
		t.Error("two runs differ")
	}
}
