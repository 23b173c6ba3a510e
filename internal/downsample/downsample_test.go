package downsample

import (
	"slices"
	"testing"
)

func ident(v *int) float64 { return float64(*v) }

// TestMinMaxKeepsExtremes: a long series comes back within the bound, with
// its first, last, highest and lowest points, in order.
func TestMinMaxKeepsExtremes(t *testing.T) {
	in := make([]int, 1000)
	for i := range in {
		in[i] = i % 7
	}
	in[500], in[123] = 99, -5
	out := MinMax(in, 50, ident)
	if len(out) > 50 {
		t.Fatalf("%d points, want at most 50", len(out))
	}
	if out[0] != in[0] || out[len(out)-1] != in[len(in)-1] {
		t.Errorf("ends %d…%d, want %d…%d", out[0], out[len(out)-1], in[0], in[len(in)-1])
	}
	if slices.Max(out) != 99 || slices.Min(out) != -5 {
		t.Errorf("max %d min %d, want 99 and -5", slices.Max(out), slices.Min(out))
	}
	if i, j := slices.Index(out, -5), slices.Index(out, 99); i > j {
		t.Errorf("trough at %d after peak at %d: order lost", i, j)
	}
}

// TestMinMaxShortSeriesIsACopy: a series that fits comes back equal and
// not aliased.
func TestMinMaxShortSeriesIsACopy(t *testing.T) {
	in := []int{3, 1, 2}
	out := MinMax(in, 10, ident)
	if !slices.Equal(out, in) {
		t.Fatalf("got %v, want %v", out, in)
	}
	out[0] = 42
	if in[0] != 3 {
		t.Error("the copy aliases its input")
	}
}
