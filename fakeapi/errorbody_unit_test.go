package fakeapi

import (
	"testing"

	"github.com/simbench/simbench/spec"
)

// A 429 names the limit that refused it with that limit's own figures, in
// its own unit: a per-second limit under a per-minute one is not given the
// per-minute quota's figures divided by 60.
func TestRejectMessageNamesTheLimitInItsUnit(t *testing.T) {
	tests := []struct {
		name string
		cfg  spec.Config
		q    Quota
		want string
	}{
		{"rps alone", spec.Config{Name: "s", RPS: 5}, Quota{Limit: 300, Remaining: 0},
			"Rate limit reached for requests per second (RPS) on service s: Limit 5, Remaining 0."},
		{"rps under an rpm", spec.Config{Name: "s", RPS: 5, RPM: 200}, Quota{Limit: 200, Remaining: 150},
			"Rate limit reached for requests per second (RPS) on service s."},
	}
	for _, tt := range tests {
		d := &Decision{Kind: KindRateLimited, Limit: LimitRPS, Requests: tt.q}
		if got := rejectMessage(&ServiceConfig{Config: tt.cfg}, d, nil); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
