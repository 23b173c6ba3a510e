package live

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// A live fleet whose --processes and --quota split divide a service's rate
// below the scheduler's floor (one a day) is refused before anything
// starts, naming the strategy and the service: one request an hour among
// 24 processes is the floor itself, among 25 below it; a time scale of
// 0.5 plays the rate twice as fast, so 25 processes are then taken.
func TestLiveSplitBelowTheFloorRefused(t *testing.T) {
	sc, err := scenarios.Parse("a.toml", []byte(`name = "a"
duration = "10m"
[services.s]
rpm = "1/h"
[tools.t]
service = "s"
[workload]
sessions = 2
calls = [ { tool = "t", count = 1 } ]
[[strategy]]
name = "paced"
token_bucket = true
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		processes int
		scale     float64
		want      string // "" for taken
	}{
		{24, 0, ""},
		{25, 0, `strategy "paced": "split" gives each of the 25 processes 0.000667 requests a minute of service "s"`},
		{25, 0.5, ""},
	} {
		err := LiveOptions{Processes: tt.processes, Quota: QuotaSplit, TimeScale: tt.scale}.Validate(sc)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%d processes at time scale %g: %v, want it taken", tt.processes, tt.scale, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrBadLiveOption)):
			t.Errorf("%d processes at time scale %g: %v, want a bad option saying %q", tt.processes, tt.scale, err, tt.want)
		}
	}
	// With quota full every process has the whole rate.
	if err := (LiveOptions{Processes: 1000, Quota: QuotaFull}).Validate(sc); err != nil {
		t.Errorf("1000 processes with quota full: %v", err)
	}
}

// TestLiveRefusesStoreOutage checks that a live run refuses a strategy
// whose quota simulates a store outage (its Redis is real), naming the
// strategy, and runs the others.
func TestLiveRefusesStoreOutage(t *testing.T) {
	sc, err := scenarios.Builtin("shared-key")
	if err != nil {
		t.Fatal(err)
	}
	c := *sc
	c.Strategies = slices.Clone(sc.Strategies)
	q := &c.Strategy("shared").Quota
	q.OutageAt, q.OutageFor, q.Outage = time.Minute, time.Minute, scenarios.OutageDown
	err = LiveOptions{TimeScale: 0.2}.Validate(&c)
	if !errors.Is(err, ErrBadLiveOption) || !strings.Contains(err.Error(), `strategy "shared": quota.outage_at simulates its store's outage in virtual time only`) {
		t.Errorf("live options for a simulated store outage: %v; want ErrBadLiveOption naming the strategy", err)
	}
	if err := (LiveOptions{TimeScale: 0.2, Options: sim.Options{Strategies: []string{"full", "split"}}}).Validate(&c); err != nil {
		t.Errorf("live options leaving the strategy out: %v; want none", err)
	}
}
