package suggest

import "testing"

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"tier3", "tier3", 0},
		{"tier", "tier3", 1},
		{"tire3", "tier3", 2},
		{"burst8", "burst-8", 1},
		{"×1", "x1", 1}, // runes, not bytes
		{"abc", "", 3},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
