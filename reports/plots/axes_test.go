package plots

import (
	"slices"
	"testing"

	"gonum.org/v1/plot"
)

// labels returns the labelled ticks of a ticker over lo..hi.
func labels(t plot.Ticker, lo, hi float64) []string {
	var out []string
	for _, tk := range t.Ticks(lo, hi) {
		if tk.Label != "" {
			out = append(out, tk.Label)
		}
	}
	return out
}

func TestLogTicksLabelOneTwoFive(t *testing.T) {
	tests := []struct {
		name   string
		ticker LogTicks
		lo, hi float64
		want   []string
	}{
		{"time to answer", LogTicks{}, 80, 6000, []string{"100", "200", "500", "1k", "2k", "5k"}},
		{"within a decade", LogTicks{}, 1100, 4800, []string{"2k", "3k", "4k"}},
		{"short axis, many decades", LogTicks{MaxLabels: 6}, 0.5, 80000, []string{"1", "10", "100", "1k", "10k"}},
		// 1-2-5 would be 11 labels and 1-3 eight: one per decade.
		{"short axis, fewer decades", LogTicks{MaxLabels: 6}, 1, 5000, []string{"1", "10", "100", "1k"}},
	}
	for _, tt := range tests {
		if got := labels(tt.ticker, tt.lo, tt.hi); !slices.Equal(got, tt.want) {
			t.Errorf("%s: labels %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestLinTicksLabelAboutFive(t *testing.T) {
	if got, want := labels(LinTicks{}, 0, 1800), []string{"0", "500", "1,000", "1,500"}; !slices.Equal(got, want) {
		t.Errorf("labels %v, want %v", got, want)
	}
}
