package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReadSamples: both units read their lines, with comments and blank
// lines skipped.
func TestReadSamples(t *testing.T) {
	const file = "# observed\n120ms\n\n1.5 # milliseconds\n  2s  \n"
	d, err := ReadSamples[time.Duration](strings.NewReader(file))
	if want := []time.Duration{120 * time.Millisecond, 1500 * time.Microsecond, 2 * time.Second}; err != nil || !slices.Equal(d, want) {
		t.Errorf("durations = %v, %v; want %v", d, err, want)
	}
	f, err := ReadSamples[float64](strings.NewReader("3\n0.5 # half\n0\n"))
	if want := []float64{3, 0.5, 0}; err != nil || !slices.Equal(f, want) {
		t.Errorf("amounts = %v, %v; want %v", f, err, want)
	}
}

// TestReadSamplesErrors: a bad line is named by its number, as a
// *LineError, and a file without values is ErrNoSamples.
func TestReadSamplesErrors(t *testing.T) {
	tests := []struct {
		give, want string
		line       int
	}{
		{"10\nfast\n", `line 2: "fast" is neither a duration`, 2},
		{"-5ms\n", `line 1: "-5ms" is negative`, 1},
		{"1\n-5\n", `line 2: "-5" is negative`, 2},
		{"NaN\n", `line 1: "NaN" is neither a duration`, 1},
		{"1e13\n", `line 1: "1e13" milliseconds is longer than the longest duration`, 1},
		{"# only a comment\n", "holds no values", 0},
	}
	for _, tt := range tests {
		_, err := ReadSamples[time.Duration](strings.NewReader(tt.give))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadSamples(%q) = %v, want %q", tt.give, err, tt.want)
		}
		var le *LineError
		if got := errors.As(err, &le); got != (tt.line > 0) || got && le.Line != tt.line {
			t.Errorf("ReadSamples(%q) = %v, want a LineError at line %d", tt.give, err, tt.line)
		}
		if tt.line == 0 && !errors.Is(err, ErrNoSamples) {
			t.Errorf("ReadSamples(%q) = %v, want ErrNoSamples", tt.give, err)
		}
	}
	for _, give := range []string{"-1\n", "x\n", "NaN\n", "Inf\n"} {
		if _, err := ReadSamples[float64](strings.NewReader(give)); err == nil || !strings.Contains(err.Error(), "is not a number ≥ 0") {
			t.Errorf("amounts %q = %v, want a refusal", give, err)
		}
	}
}
