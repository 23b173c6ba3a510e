package satmath

import (
	"math"
	"testing"
	"time"
)

const (
	maxI = math.MaxInt64
	minI = math.MinInt64
)

func TestAdd(t *testing.T) {
	tests := []struct {
		a, b, want int64
	}{
		{1, 2, 3},
		{maxI, 1, maxI},      // wraps to MinInt64 without saturation
		{maxI, maxI, maxI},   //
		{minI, -1, minI},     // wraps to MaxInt64
		{minI, minI, minI},   //
		{maxI, minI, -1},     // opposite signs never overflow
		{maxI - 5, 5, maxI},  // exactly the bound
		{minI + 5, -5, minI}, //
		{0, minI, minI},
	}
	for _, tt := range tests {
		if got := Add(tt.a, tt.b); got != tt.want {
			t.Errorf("Add(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Add(tt.b, tt.a); got != tt.want {
			t.Errorf("Add(%d, %d) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
	// A delay of "forever" after a late now stays forever, in time.Duration.
	if got := Add(time.Duration(maxI), time.Hour); got != time.Duration(maxI) {
		t.Errorf("Add(max duration, 1h) = %v", got)
	}
}

func TestSub(t *testing.T) {
	tests := []struct {
		a, b, want int64
	}{
		{3, 2, 1},
		{minI, 1, minI},
		{maxI, -1, maxI},
		{0, minI, maxI}, // −MinInt64 does not fit
		{-1, minI, maxI},
		{maxI, maxI, 0},
		{minI, minI, 0},
		{minI, maxI, minI},
	}
	for _, tt := range tests {
		if got := Sub(tt.a, tt.b); got != tt.want {
			t.Errorf("Sub(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestMul(t *testing.T) {
	tests := []struct {
		a, b, want int64
	}{
		{6, 7, 42},
		{0, minI, 0},
		{maxI, 2, maxI},
		{maxI, -2, minI},
		{minI, -1, maxI}, // the division check alone misses this one
		{-1, minI, maxI},
		{minI, 1, minI},
		{1 << 32, 1 << 31, maxI},       // 2^63 does not fit
		{3037000500, 3037000500, maxI}, // just above √MaxInt64
		{-3037000499, 3037000499, -3037000499 * 3037000499},
	}
	for _, tt := range tests {
		if got := Mul(tt.a, tt.b); got != tt.want {
			t.Errorf("Mul(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestFromFloat(t *testing.T) {
	tests := []struct {
		give float64
		want int64
	}{
		{0, 0},
		{1.9, 1},
		{-1.9, -1},
		{math.NaN(), 0},
		{math.Inf(1), maxI},
		{math.Inf(-1), minI},
		{1e308, maxI},
		{-1e308, minI},
		{0x1p63, maxI},  // float64(MaxInt64) rounds up to 2^63, which does not fit
		{-0x1p63, minI}, // −2^63 fits exactly
		{0x1p62, 1 << 62},
	}
	for _, tt := range tests {
		if got := FromFloat[int64](tt.give); got != tt.want {
			t.Errorf("FromFloat(%v) = %d, want %d", tt.give, got, tt.want)
		}
	}
}

func TestSecondsAndScale(t *testing.T) {
	tests := []struct {
		give float64
		want time.Duration
	}{
		{1.5, 1500 * time.Millisecond},
		{1e308, time.Duration(maxI)},
		{-1e308, time.Duration(minI)},
		{math.NaN(), 0},
		{math.Inf(1), time.Duration(maxI)},
		{1 / 1e-300, time.Duration(maxI)}, // a gap of 1 over a tiny rate
		{9.3e9, time.Duration(maxI)},      // ~295 years: past 2^63 ns
	}
	for _, tt := range tests {
		if got := Seconds(tt.give); got != tt.want {
			t.Errorf("Seconds(%v) = %v, want %v", tt.give, got, tt.want)
		}
	}
	if got := Scale(time.Duration(maxI), 2); got != time.Duration(maxI) {
		t.Errorf("Scale(max, 2) = %v", got)
	}
	if got := Scale(time.Second, math.NaN()); got != 0 {
		t.Errorf("Scale(1s, NaN) = %v", got)
	}
	if got := Scale(time.Second, 0.5); got != 500*time.Millisecond {
		t.Errorf("Scale(1s, 0.5) = %v", got)
	}
}

func TestInt(t *testing.T) {
	tests := []struct {
		give float64
		want int
	}{
		{2.7, 2},
		{math.NaN(), 0},
		{1e308, math.MaxInt},
		{-1e308, math.MinInt},
		{math.Inf(1), math.MaxInt},
	}
	for _, tt := range tests {
		if got := Int(tt.give); got != tt.want {
			t.Errorf("Int(%v) = %d, want %d", tt.give, got, tt.want)
		}
	}
}
