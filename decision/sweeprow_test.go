package decision

import (
	"slices"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
)

func TestCapsAround(t *testing.T) {
	tests := []struct {
		give int
		want []int
	}{
		{50, []int{13, 25, 38, 50, 63, 75, 100}},
		{1, []int{1, 2}},
		{4, []int{1, 2, 3, 4, 5, 6, 8}},
	}
	for _, tt := range tests {
		if got := CapsAround(tt.give); !slices.Equal(got, tt.want) {
			t.Errorf("CapsAround(%d) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

func TestVerdict(t *testing.T) {
	plan := &Plan{Service: Service{Name: "api", Headroom: 0.7}, BindingLimit: LimitRPM, MaxInFlight: 8}
	points := []results.SweepPoint{
		{Cap: 4, P95Ms: 900, RateLimitedShare: 0},
		{Cap: 8, P95Ms: 1200, RateLimitedShare: 0.02},
		{Cap: 16, P95Ms: 800, RateLimitedShare: 0.09},
	}
	tests := []struct {
		chosen int
		want   []string
	}{
		{8, []string{"arithmetic and simulation agree: 8 in flight for api"}},
		{4, []string{"arithmetic says 8, the simulation 4 for api", "at 8 the service still answered 2.00% of attempts with 429", "the latency tail: p95 rises from 900 ms at 4 to 1,200 ms at 8"}},
		{16, []string{"the workload's bursts queue at the computed cap"}},
		{0, []string{"no cap with 429s at or below 0.10%", "headroom 0.70"}},
	}
	for _, tt := range tests {
		got := Verdict(plan, points, tt.chosen, 0.001, nil)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("chosen %d: %q lacks %q", tt.chosen, got, w)
			}
		}
	}
	tpm := *plan
	tpm.BindingLimit = LimitTPM
	if got := Verdict(&tpm, points, 4, 0.001, nil); !strings.Contains(got, "the token limit binds") {
		t.Errorf("tpm binding not named: %q", got)
	}

	// A workload offering more than the limits sustain explains a larger
	// cap, and no cap at all, by the overload.
	over := &LoadCheck{OfferedPerMinute: 2200, SustainedPerMinute: 875, FullPerMinute: 1250, Ratio: 2200.0 / 875}
	if got := Verdict(plan, points, 16, 0.001, over); !strings.Contains(got, "offers 2,200 turns/min, 2.51× the 875") || strings.Contains(got, "bursts queue") {
		t.Errorf("overload not named for a larger cap: %q", got)
	}
	if got := Verdict(plan, points, 0, 0.001, over); !strings.Contains(got, "offers 2.51× what the limits sustain") {
		t.Errorf("overload not named when no cap qualifies: %q", got)
	}
	fits := &LoadCheck{OfferedPerMinute: 500, SustainedPerMinute: 875, Ratio: 500.0 / 875}
	if got := Verdict(plan, points, 16, 0.001, fits); !strings.Contains(got, "bursts queue") {
		t.Errorf("a fitting load blamed: %q", got)
	}
}
