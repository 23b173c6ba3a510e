package sim

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/simbench/simbench/scenarios"
)

// Each service's timeline adds up to the strategy's: every attempt and
// every 429 is in exactly one service's buckets, a service's peak in
// flight never exceeds the strategy's nor its per-service cap, and the
// per-service caps are recorded as the scenario sets them.
func TestServiceTimelinesAddUp(t *testing.T) {
	sc, err := scenarios.Builtin("multi-agent")
	if err != nil {
		t.Fatal(err)
	}
	sc.Duration = time.Minute
	res, err := Run(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range res.Strategies {
		if want := sc.Strategies[i].MaxInFlightPerService; !maps.Equal(s.MaxInFlightPerService, want) {
			t.Errorf("%s: per-service caps %v, want %v", s.Name, s.MaxInFlightPerService, want)
		}
		if len(s.ServiceTimelines) != len(sc.Services) {
			t.Fatalf("%s: timelines of %d services, want %d", s.Name, len(s.ServiceTimelines), len(sc.Services))
		}
		started := make([]float64, len(s.Timeline))
		limited := make([]float64, len(s.Timeline))
		var any429 bool
		for name, tl := range s.ServiceTimelines {
			if len(tl) > len(s.Timeline) {
				t.Fatalf("%s: %s has %d buckets, the strategy %d", s.Name, name, len(tl), len(s.Timeline))
			}
			for k, pt := range tl {
				started[k] += pt.Started
				limited[k] += pt.RateLimited
				any429 = any429 || pt.RateLimited > 0
				if pt.InFlight > s.Timeline[k].InFlight {
					t.Errorf("%s: %s peaks at %d in flight at %v s, above all services' %d", s.Name, name, pt.InFlight, pt.T, s.Timeline[k].InFlight)
				}
				if c := s.MaxInFlightPerService[name]; c > 0 && pt.InFlight > c {
					t.Errorf("%s: %s has %d in flight at %v s, above its cap %d", s.Name, name, pt.InFlight, pt.T, c)
				}
			}
		}
		for k, pt := range s.Timeline {
			if started[k] != pt.Started || limited[k] != pt.RateLimited {
				t.Errorf("%s at %v s: services sum to %v started/s and %v 429s/s, the strategy has %v and %v",
					s.Name, pt.T, started[k], limited[k], pt.Started, pt.RateLimited)
			}
		}
		if s.RateLimited > 0 && !any429 {
			t.Errorf("%s: %d 429s, none in the services' timelines", s.Name, s.RateLimited)
		}
	}
}

// A run of one service records no per-service timeline: the strategy's
// is that service's.
func TestOneServiceHasNoServiceTimelines(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	sc.Duration = 10 * time.Second
	res, err := Run(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Strategies {
		if s.ServiceTimelines != nil || s.MaxInFlightPerService != nil {
			t.Errorf("%s: service timelines %v, per-service caps %v: want none", s.Name, s.ServiceTimelines, s.MaxInFlightPerService)
		}
	}
}
