//go:build long

package live

import (
	"context"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/redistest"
	"github.com/simbench/simbench/spec"
)

// A fleet of worker processes counts the provider's time from the start its
// members meet at, as the virtual run counts the model's from the
// workload's start: otherwise the provider's windows would begin when it
// did, before the members were launched, and cut the workload elsewhere.
// The two sides map Redis's clock to this host's each by its own measured
// offset, so they agree to a fraction of a Redis round trip; the tolerance
// is half the rendezvous's lead, well short of the lead by which the
// provider's own start precedes any meeting. The tolerance is on wall
// clocks, so the check is long-only.
func TestLongFleetEpochIsMembersStart(t *testing.T) {
	rs := redistest.Start(t)
	rdb := redistest.Client(t, rs.URL())
	srv, err := fakeapi.Start(fakeapi.ServerConfig{Services: []fakeapi.ServiceConfig{{Config: spec.Config{Name: "api", RPS: 1, Algorithm: spec.FixedWindow}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	const runID = "epoch-test"
	member := &memberSetup{n: 1, runID: runID, rdb: rdb, wait: time.Minute}
	start, err := member.meet(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	watch := &memberSetup{n: 1, runID: runID, rdb: rdb, wait: time.Minute}
	if err := alignEpoch(ctx, srv, watch, "s"); err != nil {
		t.Fatal(err)
	}
	if d := srv.Epoch().Sub(start); d.Abs() > rendezvousLead/2 {
		t.Errorf("the provider counts its time from %v off the members' start: its windows fall elsewhere than in virtual time", d)
	}
}

// TestLongLiveQuotaModesAgainstServer checks what TestLiveProcessesQuotaModes
// cannot on a loaded machine: a shared quota draws fewer 429s than every
// process at the full limit. On a loaded machine the shared quota's round
// trips time out and its processes fall back to local shares, which can
// draw more; a try that misses is tried again, three tries at most.
func TestLongLiveQuotaModesAgainstServer(t *testing.T) {
	const tries = 3
	rs := redistest.Start(t)
	var full, shared int64
	for try := 1; try <= tries; try++ {
		full = runQuotaMode(t, rs.URL(), QuotaFull).RateLimited
		shared = runQuotaMode(t, rs.URL(), QuotaShared).RateLimited
		if shared < full {
			return
		}
		t.Logf("try %d of %d: shared quota saw %d 429s, full limits per process %d", try, tries, shared, full)
	}
	t.Errorf("shared quota saw %d 429s, full limits per process %d: want fewer", shared, full)
}

// TestLongLiveFleetFromScenarioModes checks that each strategy's quota
// mode written in the scenario applies to its live fleet: the split
// strategy, which never offers more than the limit, draws fewer 429s than
// the one with the full limit per process. On a loaded machine a run
// that cannot keep its timing may not show it; a try that misses is tried
// again, three tries at most.
func TestLongLiveFleetFromScenarioModes(t *testing.T) {
	const tries = 3
	var full, split int64
	for try := 1; try <= tries; try++ {
		res, err := RunLive(liveContext(t), fleetFromScenario(), LiveOptions{TimeScale: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		if full, split = res.Strategies[0].RateLimited, res.Strategies[1].RateLimited; split < full {
			return
		}
		t.Logf("try %d of %d: split drew %d 429s, full %d", try, tries, split, full)
	}
	t.Errorf("split drew %d 429s, full %d: want fewer (did the strategies' quota modes apply?)", split, full)
}
