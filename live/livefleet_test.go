package live

import (
	"context"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/redistest"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/quota"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/spec"
)

// busy is small() with more demand than its 600 RPM: twelve agents that
// barely think, so three processes each at the full limit offer about three
// times it.
func busy() *scenarios.Scenario {
	sc := small()
	sc.Duration = 60 * time.Second
	sc.Workload.Sessions = 12
	sc.Workload.Think = spec.Dist[time.Duration]{Kind: spec.DistUniform, Min: 50 * time.Millisecond, Max: 100 * time.Millisecond}
	return sc
}

// TestLiveProcessesQuotaModes runs busy() live on three processes with
// uneven shares under each quota mode, against one fake server and (shared)
// a real redis-server started for the run, and checks what the machine's
// load cannot change: each run reports every process, the processes'
// goodput and turns add up to the fleet's, and the processes' quota round
// trips are the quota scripts the redis-server ran, as in virtual time
// they are the operations the simulated store applied: every script it
// ran is a round trip some process counted, and every round trip answered
// is a script it ran. (A loaded machine times round trips out; those the
// processes count as unanswered, which the server may or may not have
// run.) Whether a shared quota draws fewer 429s depends on the load:
// TestLongLiveQuotaModesAgainstServer checks it.
func TestLiveProcessesQuotaModes(t *testing.T) {
	rs := redistest.Start(t)
	for _, mode := range []QuotaMode{QuotaFull, QuotaSplit, QuotaShared} {
		st := runQuotaMode(t, rs.URL(), mode)
		if mode != QuotaShared {
			continue
		}
		// A process's first script call may meet a server that has not
		// loaded the script yet: go-redis then sends it again, whole, and
		// the server counts the first as failed, hence the slack of 3.
		// (Counting only the reservations granted, as live rows once did,
		// reads about half the server's count.)
		trips, unanswered := quotaTrips(st)
		ran := scriptsRun(t, rs.URL())
		if ran > trips+3 || trips-unanswered > ran+3 {
			t.Errorf("the processes report %d quota round trips, %d of them unanswered; the redis-server ran %d quota scripts", trips, unanswered, ran)
		}
		t.Logf("%d quota round trips, %d unanswered; %d scripts run", trips, unanswered, ran)
	}
}

// runQuotaMode runs busy() live on three processes with shares 3:2:1 under
// quota mode (shared: on the redis-server at url), checks that the
// processes' rows add up to the fleet's, and returns the strategy's result.
func runQuotaMode(t *testing.T, url string, mode QuotaMode) results.StrategyResult {
	t.Helper()
	res, err := RunLive(liveContext(t), busy(), LiveOptions{TimeScale: 0.05, Processes: 3, Shares: []float64{3, 2, 1}, Quota: mode, Redis: url})
	if err != nil {
		t.Fatalf("%s: %v", mode, err)
	}
	st := res.Strategies[0]
	if len(st.Processes) != 3 {
		t.Fatalf("%s: %d processes reported, want 3", mode, len(st.Processes))
	}
	var sum, share float64
	for _, p := range st.Processes {
		sum += p.GoodputPerS
		share += p.Share
	}
	if math.Abs(sum-st.GoodputPerS) > 1e-3*max(st.GoodputPerS, 1) || math.Abs(share-1) > 1e-6 {
		t.Errorf("%s: processes' goodput adds to %.3f/s (shares to %.3f), total %.3f/s", mode, sum, share, st.GoodputPerS)
	}
	// Shares divide the sessions, not the turns: how many turns a
	// process begins depends on the limit it gets (under "full" the
	// light process, whose own bucket never binds, begins the most).
	// The processes' turns add up to the fleet's.
	var turns int64
	for _, p := range st.Processes {
		turns += p.Turns
	}
	if turns != st.Turns {
		t.Errorf("%s: processes began %d turns, the fleet %d", mode, turns, st.Turns)
	}
	t.Logf("%s: goodput %.2f/s, 429s %d, processes %+v", mode, st.GoodputPerS, st.RateLimited, st.Processes)
	return st
}

// quotaTrips is the processes' quota round trips, all told, and how many
// of them got no answer.
func quotaTrips(st results.StrategyResult) (trips, unanswered int64) {
	for _, p := range st.Processes {
		trips += p.QuotaRoundTrips
		unanswered += p.QuotaUnanswered
	}
	return trips, unanswered
}

// TestLiveSharedQuotaSurvivesRedisLoss kills the run's redis-server a
// third into a shared-quota live run and starts it again two thirds in:
// the run finishes, the fallback period is reported as an event and per
// process.
func TestLiveSharedQuotaSurvivesRedisLoss(t *testing.T) {
	rs := redistest.Start(t)
	sc := busy()
	kill := time.AfterFunc(time.Second, rs.Stop)
	defer kill.Stop()
	back := make(chan error, 1)
	restart := time.AfterFunc(2*time.Second, func() { back <- rs.Restart() })
	defer restart.Stop()
	res, err := RunLive(liveContext(t), sc, LiveOptions{TimeScale: 0.05, Processes: 2, Quota: QuotaShared, Redis: rs.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-back; err != nil {
		t.Fatal(err)
	}
	st := res.Strategies[0]
	var spans int
	for _, e := range res.Events {
		if e.Kind == "quota-fallback" && e.EndS > e.StartS {
			spans++
		}
	}
	if spans == 0 {
		t.Errorf("no quota-fallback event reported: %+v", res.Events)
	}
	for _, p := range st.Processes {
		if p.QuotaFallbacks == 0 || p.QuotaFallbackS <= 0 {
			t.Errorf("process %s reports %d fallbacks for %.2f s, want at least one", p.Name, p.QuotaFallbacks, p.QuotaFallbackS)
		}
	}
	if st.Turns == 0 || st.GoodputPerS == 0 {
		t.Errorf("run did nothing: %+v", st)
	}
	// Without AllowRedisFallback, a strategy that ran on local shares did
	// not measure the shared quota: it is marked so.
	if !strings.Contains(st.Invalid, "on local shares while Redis was unreachable") {
		t.Errorf("invalid %q, want the fallback named", st.Invalid)
	}
	t.Logf("events %+v; processes %+v", res.Events, st.Processes)
}

// TestLiveFleetFromScenario runs busy() live with its fleet written in the
// scenario (workload.processes and process_shares) and each strategy's own
// quota.mode, with nothing set in LiveOptions: every strategy runs on three
// processes with the scenario's shares. That the modes apply (the split
// strategy, which never offers more than the limit, draws fewer 429s than
// the one with the full limit per process) depends on the machine keeping
// the run's timing: TestLongLiveFleetFromScenarioModes checks it.
func TestLiveFleetFromScenario(t *testing.T) {
	res, err := RunLive(liveContext(t), fleetFromScenario(), LiveOptions{TimeScale: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range res.Strategies {
		if len(st.Processes) != 3 || st.Processes[0].Share != 0.5 {
			t.Fatalf("%s: processes %+v, want 3 with shares 3:2:1", st.Name, st.Processes)
		}
	}
}

// fleetFromScenario is busy() on three processes with shares 3:2:1 set in
// the scenario, with two strategies: "full", each process at the full
// limit, and "split", each at its share of it.
func fleetFromScenario() *scenarios.Scenario {
	sc := busy()
	sc.Workload.Processes, sc.Workload.ProcessShares = 3, []float64{3, 2, 1}
	full := sc.Strategies[0]
	full.Name, full.TokenBucket, full.Quota = "full", true, scenarios.Quota{Mode: scenarios.QuotaFull}
	split := full
	split.Name, split.Quota = "split", scenarios.Quota{Mode: scenarios.QuotaSplit}
	sc.Strategies = []scenarios.Strategy{full, split}
	return sc
}

// virtualTwin gives the virtual run a live fleet is compared with: the
// same processes, normalised shares and quota mode per strategy (the
// options' mode for all, else each strategy's own).
func TestVirtualTwin(t *testing.T) {
	sc := busy()
	shared := sc.Strategies[0]
	shared.Name, shared.Quota = "own-shared", scenarios.Quota{Mode: scenarios.QuotaShared}
	sc.Strategies = append(sc.Strategies, shared)
	if got := virtualTwin(sc, &fleetOptions{n: 1}); got != sc {
		t.Fatal("one process: want the scenario itself")
	}
	tests := []struct {
		name  string
		fo    fleetOptions
		modes []string
	}{
		{"each strategy's own", fleetOptions{n: 3, shares: []float64{0.5, 0.25, 0.25}, mode: QuotaFull}, []string{"full", "shared"}},
		{"the options' for all", fleetOptions{n: 3, shares: []float64{0.5, 0.25, 0.25}, mode: QuotaSplit, explicit: true}, []string{"split", "split"}},
	}
	for _, tt := range tests {
		got := virtualTwin(sc, &tt.fo)
		if got.Workload.Processes != 3 || len(got.Workload.ProcessShares) != 3 || got.Workload.ProcessShares[0] != 0.5 {
			t.Errorf("%s: workload %+v", tt.name, got.Workload)
		}
		for i, want := range tt.modes {
			if m := got.Strategies[i].Quota.Mode; m != want {
				t.Errorf("%s: %s has mode %q, want %q", tt.name, got.Strategies[i].Name, m, want)
			}
		}
		if sc.Workload.Processes != 0 || sc.Strategies[0].Quota.Mode != "" {
			t.Errorf("%s: the scenario itself was changed", tt.name)
		}
	}
}

// TestFleetRunnersSharedLease builds a live shared-quota fleet at a time
// scale of 0.05 from a strategy whose quota has a 250 ms lease of at most a
// quarter of the burst: each process's quota.Shared holds its grants for
// 12.5 ms of real time (the lease, scaled) and at most 0.25 of the burst
// (half of it, 1 ÷ the fleet's 2 processes, with lease_max unset), and without a lease each grant is one call's units, valid for
// quota.DefaultLeaseTTL scaled. The failover's round-trip timeout and probe
// interval scale alike (the 50 ms default timeout is 2.5 ms of real time),
// its policy is the strategy's fallback, and its local share divides the
// limit among the fleet's processes.
func TestFleetRunnersSharedLease(t *testing.T) {
	for _, tc := range []struct {
		q              scenarios.Quota
		ttl            time.Duration
		maxPart        float64
		timeout, probe time.Duration
		policy         quota.Policy
	}{
		{scenarios.Quota{Mode: scenarios.QuotaShared, Lease: 250 * time.Millisecond, LeaseMax: 0.25}, 12500 * time.Microsecond, 0.25,
			2500 * time.Microsecond, 50 * time.Millisecond, quota.FallbackLocal},
		// lease_max unset: half the burst for this fleet of 2, whatever
		// process count the scenario was read with.
		{scenarios.Quota{Mode: scenarios.QuotaShared, Lease: 250 * time.Millisecond}, 12500 * time.Microsecond, 0.5,
			2500 * time.Microsecond, 50 * time.Millisecond, quota.FallbackLocal},
		{scenarios.Quota{Mode: scenarios.QuotaShared}, 50 * time.Millisecond, math.SmallestNonzeroFloat64,
			2500 * time.Microsecond, 50 * time.Millisecond, quota.FallbackLocal},
		{scenarios.Quota{Mode: scenarios.QuotaShared, Timeout: 200 * time.Millisecond, ProbeEvery: 3 * time.Second, Fallback: scenarios.FallbackClosed},
			50 * time.Millisecond, math.SmallestNonzeroFloat64, 10 * time.Millisecond, 150 * time.Millisecond, quota.FailClosed},
	} {
		sc := setup.Scale(busy(), 0.05)
		st := sc.Strategies[0]
		st.TokenBucket, st.Quota = true, tc.q
		l := &liveRun{sc: sc, st: &st, f: 0.05}
		cfg, err := setup.SchedConfig(sc, &st)
		if err != nil {
			t.Fatal(err)
		}
		fo := &fleetOptions{n: 2, mode: QuotaShared, redis: "redis://127.0.0.1:1", shares: []float64{0.5, 0.5}}
		idle := func(context.Context, *sched.Call, int) sched.Outcome { return sched.Outcome{} }
		closeAll, err := l.fleetRunners(cfg, func(int) sched.Executor { return idle }, fo)
		if err != nil {
			t.Fatal(err)
		}
		for p, pt := range l.procs {
			if pt.shared == nil || pt.store == nil {
				t.Fatalf("lease %v: process %d has no shared quota", tc.q.Lease, p)
			}
			if pt.shared.TTL != tc.ttl || pt.shared.Max != tc.maxPart {
				t.Errorf("lease %v: process %d's grants last %v, at most %g of the burst; want %v, %g", tc.q.Lease, p, pt.shared.TTL, pt.shared.Max, tc.ttl, tc.maxPart)
			}
			if f := pt.store; f.Timeout != tc.timeout || f.ProbeEvery != tc.probe || f.Policy != tc.policy || f.Processes != 2 {
				t.Errorf("quota %+v: process %d's failover times out at %v, probes every %v, policy %v, divides by %d; want %v, %v, %v, 2 (the scenario's figures × 0.05)",
					tc.q, p, f.Timeout, f.ProbeEvery, f.Policy, f.Processes, tc.timeout, tc.probe, tc.policy)
			}
		}
		closeAll()
	}
}

// The virtual run a live fleet of 4 is compared with is shared-key as if
// written for 4 processes: the same results, lease slices included (an
// even part of the burst for the fleet that runs, not for the 6 processes
// the file names).
func TestVirtualTwinIsTheFleetAsWritten(t *testing.T) {
	sc, err := scenarios.Builtin("shared-key")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../scenarios/shared-key.toml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "\nprocesses = 6\n", "\nprocesses = 4\n", 1)
	text = regexp.MustCompile(`(?m)^process_shares = .*$`).ReplaceAllString(text, "")
	if text == string(data) {
		t.Fatal("shared-key.toml no longer says processes = 6: update the test")
	}
	written, err := scenarios.Parse("shared-key.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	opts := sim.Options{Strategies: []string{"shared"}}
	twin, err := sim.Run(context.Background(), virtualTwin(sc, &fleetOptions{n: 4, shares: []float64{.25, .25, .25, .25}, mode: QuotaShared}), opts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := sim.Run(context.Background(), written, opts)
	if err != nil {
		t.Fatal(err)
	}
	a, b := twin.Strategies[0], want.Strategies[0]
	if a.TurnLatencyMs != b.TurnLatencyMs || a.Attempts != b.Attempts || a.RateLimited != b.RateLimited || a.Turns != b.Turns {
		t.Errorf("twin: p50 %v ms, %d attempts, %d 429s, %d turns; written for 4 processes: p50 %v ms, %d, %d, %d",
			a.TurnLatencyMs.P50, a.Attempts, a.RateLimited, a.Turns, b.TurnLatencyMs.P50, b.Attempts, b.RateLimited, b.Turns)
	}
}

// scriptsRun returns the scripts the redis-server at url has run (EVAL and
// EVALSHA calls that did not fail): the shared quota's operations, the
// fleet's rendezvous using plain commands.
func scriptsRun(t *testing.T, url string) int64 {
	t.Helper()
	info, err := redistest.Client(t, url).Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, line := range strings.Split(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_eval" && name != "cmdstat_evalsha") {
			continue
		}
		var calls, failed int64
		for _, kv := range strings.Split(stats, ",") {
			k, v, _ := strings.Cut(kv, "=")
			x, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				calls = x
			case "failed_calls":
				failed = x
			}
		}
		n += calls - failed
	}
	return n
}

// TestLiveFallbackWithinRun checks that a process's seconds on its
// fallback count only the run's part of each switch: a switch before the
// start (while the process connected) or lasting past the end (while its
// last turns drained) never makes them exceed the run, and a span wholly
// outside it is no event.
func TestLiveFallbackWithinRun(t *testing.T) {
	l := &liveRun{sc: &scenarios.Scenario{Duration: 30 * time.Second}, f: 0.5, st: &scenarios.Strategy{Name: "shared"},
		procs: []procTally{{downSince: -1}}}
	// The scaled scenario's 30 s are the scenario's 60 s at time scale 0.5.
	for _, span := range []struct{ from, to time.Duration }{
		{-2 * time.Second, 5 * time.Second},  // 5 s of the run
		{58 * time.Second, 62 * time.Second}, // 2 s of it
		{61 * time.Second, 64 * time.Second}, // none
	} {
		l.procs[0].downSince = span.from
		l.endFallback(0, span.to)
	}
	if got := l.procs[0].fallbackS; got != 7 {
		t.Errorf("%v s on the fallback, want 7 (5 + 2) of the 60 s run", got)
	}
	if len(l.fallbacks) != 2 || l.fallbacks[0].StartS != 0 || l.fallbacks[1].EndS != 60 {
		t.Errorf("events %+v: want two, clipped to [0, 60] s", l.fallbacks)
	}
}
