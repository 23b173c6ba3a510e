package live

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/spec"
)

// TestLiveInFlight: a quarter of the budget at 96 KiB a call, within
// [64, 65536].
func TestLiveInFlight(t *testing.T) {
	for _, c := range []struct {
		budget int64
		want   int
	}{
		{256 << 20, 682},   // 64 MiB / 96 KiB = 682.67
		{4 << 30, 10922},   // 1 GiB / 96 KiB = 10922.67
		{1 << 20, 64},      // 2 calls' worth: raised to the floor
		{1 << 40, 1 << 16}, // lowered to the ceiling
		{0, 1 << 16},       // no budget
		{-1, 1 << 16},      // no budget
		{64 * 4 * 96 << 10, 64},
		{100 * 4 * 96 << 10, 100},
	} {
		if got := LiveInFlight(c.budget); got != c.want {
			t.Errorf("LiveInFlight(%d) = %d, want %d", c.budget, got, c.want)
		}
	}
	if tr := newTransport(LiveInFlight(256 << 20)); tr.MaxConnsPerHost != 682 || tr.MaxIdleConnsPerHost != 682 {
		t.Errorf("transport: %d connections per host, %d idle; want 682 each", tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost)
	}
}

// TestLoadGauge: parts are sent while they fit the bound (or nothing is in
// flight), and how far behind the run is follows from the counts: 300
// calls not sent of 400 offered in 4 s is 100 calls/s, 3 s of load, plus
// the last timer's lateness.
func TestLoadGauge(t *testing.T) {
	g := loadGauge{bound: 10}
	for _, c := range []struct {
		n    int
		want bool
	}{{4, true}, {6, true}, {1, false}, {20, false}} {
		if got := g.admit(c.n); got != c.want {
			t.Errorf("admit(%d) at %d in flight = %v, want %v", c.n, g.inFlight, got, c.want)
		}
	}
	g.done(10)
	if !g.admit(20) { // nothing in flight: a part larger than the bound goes
		t.Error("a part refused with nothing in flight")
	}
	if g.sent != 30 || g.notSent != 21 || g.inFlight != 20 {
		t.Errorf("sent %d, not sent %d, in flight %d; want 30, 21, 20", g.sent, g.notSent, g.inFlight)
	}

	t0 := time.Unix(1000, 0)
	g = loadGauge{bound: 10, began: t0, sent: 100, notSent: 300, late: 250 * time.Millisecond}
	if got, want := g.behind(t0.Add(4*time.Second)), 3250*time.Millisecond; got != want {
		t.Errorf("behind = %v, want %v", got, want)
	}
	g.notSent = 50 // 50 of 150 in 4 s: 37.5 calls/s, 4/3 s of load
	if got, want := g.behind(t0.Add(4*time.Second)), 4*time.Second/3+250*time.Millisecond; got != want {
		t.Errorf("behind = %v, want %v", got, want)
	}
	if g.giveUp(t0.Add(4*time.Second), time.Second) || g.stopped != "" {
		t.Errorf("gave up %v behind (stopped %q)", g.behind(t0.Add(4*time.Second)), g.stopped)
	}
	g.late = GiveUpBehind
	if !g.giveUp(t0.Add(4*time.Second), 3*time.Second) || !strings.Contains(g.stopped, "stopped at 3s") || !strings.Contains(g.stopped, "50 calls not sent, 100 sent") {
		t.Errorf("did not give up %v behind, or said %q", g.behind(t0.Add(4*time.Second)), g.stopped)
	}
	if why := g.notSentReason(); !strings.Contains(why, "50 of 150 calls offered not sent") {
		t.Errorf("not sent: %q", why)
	}
}

// TestLiveOverloadStaysBounded: 500 calls/s of 1 s each need 500 in flight;
// a 16 MiB budget allows 64. The run sends what fits, counts the rest not
// sent, holds its goroutines to what 64 calls in flight need (the calls'
// own, the Runner's, the connections' at both ends) and stops, stated,
// once it is more than 2 s behind: by about 2.3 s, when the ~87% not
// sent amounts to 2 s of the offered load (sooner on a busy machine).
func TestLiveOverloadStaysBounded(t *testing.T) {
	sc := &scenarios.Scenario{
		Name: "overload", Seed: 45, Duration: 6 * time.Second,
		Workload: scenarios.Workload{
			ArrivalRate: 500,
			Calls:       []scenarios.CallGroup{{Tool: "slow", Count: spec.Constant(1.0), Probability: 1}},
		},
		Services: []scenarios.Service{{Name: "api", RequestsPerSecond: 1e6, Latency: spec.Constant(time.Second)}},
		Tools:    []scenarios.Tool{{Name: "slow", Service: "api", Kind: scenarios.KindRead}},
		Strategies: []scenarios.Strategy{{Name: "unbounded",
			Retry: scenarios.Retry{Backoff: sched.BackoffFullJitter, Base: time.Second, Cap: time.Second, Attempts: 1}}},
	}
	budget := int64(16 << 20)
	bound := LiveInFlight(budget)
	if bound != 64 {
		t.Fatalf("bound %d, want 64", bound)
	}
	var mu sync.Mutex
	peak := 0
	progress := func(string, time.Duration, time.Duration) {
		n := runtime.NumGoroutine()
		mu.Lock()
		peak = max(peak, n)
		mu.Unlock()
	}
	res, err := RunLive(liveContext(t), sc, LiveOptions{Options: sim.Options{MaxMemory: budget, Progress: progress}})
	if err != nil {
		t.Fatal(err)
	}
	s := &res.Strategies[0]
	if s.NotSent == 0 || s.FailedTurns < s.NotSent {
		t.Errorf("%d calls not sent, %d turns failed; want some not sent, each failing its turn", s.NotSent, s.FailedTurns)
	}
	if p := s.PeakInFlight["api"]; p > bound {
		t.Errorf("peak in flight %d, above the bound %d", p, bound)
	}
	// Without the bound, 500 calls in flight take at least five goroutines
	// each (part, worker, client reader and writer, server): 2,500.
	if limit := 8*bound + 200; peak > limit {
		t.Errorf("peak goroutines %d, above %d", peak, limit)
	}
	if !strings.Contains(s.Invalid, "stopped at") || !strings.Contains(s.Invalid, "behind its offered load (more than 2s") {
		t.Errorf("invalid %q, want the early stop stated", s.Invalid)
	}
	t.Logf("%d calls not sent, %d turns, %d failed, peak %d in flight, %d goroutines; %s", s.NotSent, s.Turns, s.FailedTurns, s.PeakInFlight["api"], peak, s.Invalid)
}
