package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched/quota"
	"github.com/simbench/simbench/spec"
)

// closedProcesses is a closed workload of sessions × turns turns of
// calls calls each, run by processes weighted by shares, against a service
// that limits nothing: every turn finishes.
func closedProcesses(sessions, turns, calls int, shares []float64) *scenarios.Scenario {
	return &scenarios.Scenario{
		Name: "procs", Seed: 3, Duration: time.Hour,
		Workload: scenarios.Workload{
			Sessions: sessions, Turns: turns, Think: spec.Constant(time.Second), Ramp: 5 * time.Second,
			Calls:     []scenarios.CallGroup{{Tool: "t", Count: spec.Constant(float64(calls)), Probability: 1}},
			Processes: len(shares), ProcessShares: shares,
		},
		Services: []scenarios.Service{{Name: "s", Latency: spec.Constant(100 * time.Millisecond), Headers: spec.HeadersOpenAI}},
		Tools:    []scenarios.Tool{{Name: "t", Service: "s", Tokens: spec.Constant(0.0), Kind: scenarios.KindRead}},
		Strategies: []scenarios.Strategy{{Name: "s", SerializeWrites: true, Retry: scenarios.Retry{HonorRetryAfter: true},
			Quota: scenarios.Quota{Mode: scenarios.QuotaFull}}},
	}
}

// TestProcessSplitClosed checks that a closed workload's sessions are
// divided among the processes exactly by their shares: every process runs
// its apportioned sessions' turns, and the processes' figures add up to
// the strategy's.
func TestProcessSplitClosed(t *testing.T) {
	tests := []struct {
		sessions int
		shares   []float64
		want     []int // sessions per process
	}{
		{27, []float64{3, 2, 1, 1, 1, 1}, []int{9, 6, 3, 3, 3, 3}},
		{10, []float64{3, 2, 1, 1, 1, 1}, []int{4, 2, 1, 1, 1, 1}}, // 3.33, 2.22, 1.11 ×4: the one left over goes to the largest remainder
		{7, []float64{1, 1}, []int{4, 3}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.sessions, tt.shares), func(t *testing.T) {
			const turns, calls = 4, 3
			sc := closedProcesses(tt.sessions, turns, calls, tt.shares)
			if got := sc.Workload.ProcessSessions(); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("ProcessSessions = %v, want %v", got, tt.want)
			}
			res, err := Run(context.Background(), sc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := res.Strategies[0]
			if len(r.Processes) != len(tt.shares) {
				t.Fatalf("%d processes in the results, want %d", len(r.Processes), len(tt.shares))
			}
			var turnsSum, callsSum int64
			var good float64
			for p, pr := range r.Processes {
				if pr.Turns != int64(tt.want[p]*turns) || pr.Calls != int64(tt.want[p]*turns*calls) {
					t.Errorf("%s: %d turns and %d calls, want %d and %d", pr.Name, pr.Turns, pr.Calls, tt.want[p]*turns, tt.want[p]*turns*calls)
				}
				turnsSum += pr.Turns
				callsSum += pr.Calls
				good += pr.GoodputPerS
			}
			if turnsSum != r.Turns || callsSum != r.Calls || !near(good, r.GoodputPerS, 1e-5) {
				t.Errorf("processes add up to %d turns, %d calls, %v/s; the strategy has %d, %d, %v/s", turnsSum, callsSum, good, r.Turns, r.Calls, r.GoodputPerS)
			}
		})
	}
}

func near(a, b, tol float64) bool { return a-b <= tol && b-a <= tol }

// TestOneProcessUnchanged checks that processes = 1, with any quota mode
// that has nothing to divide, runs exactly as a scenario without the key:
// the same results.json bytes and the same scenario digest.
func TestOneProcessUnchanged(t *testing.T) {
	sc, err := scenarios.Builtin("multi-agent")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Duration: time.Minute}
	marshal := func(sc *scenarios.Scenario) []byte {
		t.Helper()
		res, err := Run(context.Background(), sc, opts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	want := marshal(sc)
	zero := *sc
	zero.Workload.Processes = 0 // as a scenario built in Go without the key
	one := *sc
	one.Workload.Processes, one.Workload.ProcessShares = 1, []float64{5}
	split := one
	split.Strategies = append([]scenarios.Strategy(nil), sc.Strategies...)
	for i := range split.Strategies {
		if split.Strategies[i].TokenBucket {
			split.Strategies[i].Quota.Mode = scenarios.QuotaSplit
		}
	}
	for name, v := range map[string]*scenarios.Scenario{"processes 0": &zero, "processes 1": &one, "split of 1": &split} {
		if got := marshal(v); string(got) != string(want) {
			t.Errorf("%s: results differ from the scenario's own", name)
		}
		if ScenarioDigest(v) != ScenarioDigest(sc) {
			t.Errorf("%s: the scenario digest changed", name)
		}
	}
}

// quotaScenario is an open workload of 100 calls/s for 5 minutes, well
// within a 12,000 requests/min service of constant 100 ms latency, split
// between two processes that share its quota with round trips of rtt and
// leases of lease (0: none).
func quotaScenario(rtt, lease time.Duration) *scenarios.Scenario {
	sc := simtest.Queue(100, spec.Constant(100*time.Millisecond), 0, 30000)
	sc.Services[0].RequestsPerMinute = 12000
	sc.Workload.Processes = 2
	st := &sc.Strategies[0]
	st.TokenBucket = true
	st.Quota = scenarios.Quota{Mode: scenarios.QuotaShared, RTT: rtt, Lease: lease, LeaseMax: 0.5}
	return sc
}

// TestSharedQuotaRoundTrips checks the shared quota's model, the
// production path (each process's Core asks for credit, its quota.Shared
// reserves it from the store): without leases every attempt takes its
// grant of one request in one round trip of its own, which delays it by
// one RTT, plus the little it queues behind the process's one outstanding
// request for credit; leases cut the round trips by more than ten times
// and with them the delay. The store's own count of the operations it
// applied equals the processes' round trips: no grant bypasses it.
func TestSharedQuotaRoundTrips(t *testing.T) {
	const rtt = 2 * time.Millisecond
	run := func(lease time.Duration) (trips, ops int64, r results.StrategyResult) {
		t.Helper()
		sc := quotaScenario(rtt, lease)
		e := runOne(t, sc)
		res := e.result()
		for _, p := range res.Processes {
			trips += p.QuotaRoundTrips
		}
		return trips, e.store.ops, res
	}
	direct, ops, r := run(0)
	if r.Attempts < 25000 || r.RateLimited != 0 {
		t.Fatalf("%d attempts, %d 429s: the scenario should run within the limit", r.Attempts, r.RateLimited)
	}
	if ops != direct {
		t.Errorf("the store applied %d operations, the processes made %d round trips", ops, direct)
	}
	if direct < r.Attempts || direct > r.Attempts+4 {
		t.Errorf("without leases: %d round trips for %d attempts, want one each (and at most a grant per process and limit left over)", direct, r.Attempts)
	}
	lo := (100*time.Millisecond + rtt).Seconds() * 1000
	if m := r.CallLatencyMs.Mean; m < lo || m > lo+1 {
		t.Errorf("without leases: mean call latency %v ms, want %v (latency + one RTT) up to 1 ms of queueing for credit", m, lo)
	}
	leased, lops, lr := run(time.Second)
	if lr.RateLimited != 0 || math.Abs(float64(lr.Attempts-r.Attempts)) > 0.02*float64(r.Attempts) {
		t.Errorf("with leases: %d attempts and %d 429s, want %d ± 2%% and 0", lr.Attempts, lr.RateLimited, r.Attempts)
	}
	if lops != leased {
		t.Errorf("with leases the store applied %d operations, the processes made %d round trips", lops, leased)
	}
	if leased <= 0 || leased*10 > direct {
		t.Errorf("leases took %d round trips against %d without: want more than 0 and at least 10× fewer", leased, direct)
	}
	if lr.CallLatencyMs.Mean >= r.CallLatencyMs.Mean-float64(rtt/time.Millisecond)/2 {
		t.Errorf("with leases the mean call latency is %v ms, against %v without: leases should save most of the RTT", lr.CallLatencyMs.Mean, r.CallLatencyMs.Mean)
	}
	t.Logf("round trips: %d without leases, %d with (%.1f×); mean call %.3f ms → %.3f ms", direct, leased, float64(direct)/float64(leased), r.CallLatencyMs.Mean, lr.CallLatencyMs.Mean)
}

// TestSharedQuotaNotBypassed checks that the shared-key scenario's shared
// strategy admits its calls only through the store: the processes' grants
// came from store operations (at least one each), and the store's bucket
// was spent.
func TestSharedQuotaNotBypassed(t *testing.T) {
	sc, err := scenarios.Builtin("shared-key")
	if err != nil {
		t.Fatal(err)
	}
	st := sc.Strategy("shared")
	e, err := NewEngine(sc, st)
	if err != nil {
		t.Fatal(err)
	}
	e.Run(context.Background(), nil)
	var grants int64
	for p := range e.procs {
		grants += e.procs[p].quota.shared.Stats().Grants
	}
	if e.store.ops == 0 || grants == 0 || e.store.ops < grants {
		t.Fatalf("the store applied %d operations for %d grants: the shared quota was bypassed", e.store.ops, grants)
	}
	avail, _ := e.store.mem.Available(context.Background(), quota.Limit{Key: sharedKey, Service: "api", Kind: "rpm", PerMinute: 1200, Burst: 20})
	if avail >= 20 {
		t.Errorf("the shared bucket is full (%v of 20) after a run that spent it: the store was not used", avail)
	}
	t.Logf("%d store operations, %d grants", e.store.ops, grants)
}

// TestSharedKey is the check on the built-in shared-key scenario:
// the shared quota's 429 share is below both the full limit's and the
// static split's, and its goodput at least the split's. The scenario's
// seed and three others, so that it is not luck.
func TestSharedKey(t *testing.T) {
	sc, err := scenarios.Builtin("shared-key")
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{sc.Seed, 1, 2, 3} {
		t.Run(fmt.Sprint("seed-", seed), func(t *testing.T) {
			res, err := Run(context.Background(), sc, Options{Seed: &seed})
			if err != nil {
				t.Fatal(err)
			}
			by := map[string]*results.StrategyResult{}
			for i := range res.Strategies {
				by[res.Strategies[i].Name] = &res.Strategies[i]
			}
			full, split, shared := by["full"], by["split"], by["shared"]
			if full == nil || split == nil || shared == nil {
				t.Fatalf("strategies %v, want full, split and shared", res.Strategies)
			}
			share := func(r *results.StrategyResult) float64 { v, _ := r.Metric("rate_limited_share"); return v }
			if !(share(shared) < share(full) && share(shared) < share(split)) {
				t.Errorf("429 share: shared %.4f, full %.4f, split %.4f; want shared below both", share(shared), share(full), share(split))
			}
			if shared.GoodputPerS < split.GoodputPerS {
				t.Errorf("goodput: shared %.3f/s below split %.3f/s", shared.GoodputPerS, split.GoodputPerS)
			}
			for _, r := range []*results.StrategyResult{full, split, shared} {
				if len(r.Processes) != 6 {
					t.Errorf("%s: %d processes in the results, want 6", r.Name, len(r.Processes))
				}
			}
			t.Logf("429 share full %.4f split %.4f shared %.4f; goodput full %.2f split %.2f shared %.2f",
				share(full), share(split), share(shared), full.GoodputPerS, split.GoodputPerS, shared.GoodputPerS)
		})
	}
}

// TestProcessSplitOpen checks that an open workload's arrivals go to the
// processes by their shares (drawn per arrival: within 1% of the total of
// the exact share over 20,000 turns), and that the arrivals themselves are
// those of one process: the same turns in total.
func TestProcessSplitOpen(t *testing.T) {
	sc := simtest.Queue(100, spec.Constant(50*time.Millisecond), 0, 20000)
	res, err := Run(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	one := res.Strategies[0]
	sc.Workload.Processes, sc.Workload.ProcessShares = 3, []float64{3, 1, 1}
	res, err = Run(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Strategies[0]
	if r.Turns != one.Turns {
		t.Errorf("%d turns with three processes, %d with one: the arrivals should not change", r.Turns, one.Turns)
	}
	for p, want := range []float64{0.6, 0.2, 0.2} {
		got := float64(r.Processes[p].Turns) / float64(r.Turns)
		if math.Abs(got-want) > 0.01 {
			t.Errorf("%s ran %.4f of the turns, want %.2f ± 0.01", r.Processes[p].Name, got, want)
		}
	}
}

// TestProcessSchedConfig checks the per-process scheduler configuration
// and the shared buckets live runs take from the simulator: a sixth of
// shared-key's 20 requests/s under "split", the full limit otherwise, and
// one shared request bucket at the full limit and burst.
func TestProcessSchedConfig(t *testing.T) {
	sc, err := scenarios.Builtin("shared-key")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		strategy   string
		rpm, burst float64
	}{
		{"full", 1200, 20},
		{"split", 200, 20.0 / 6},
		{"shared", 1200, 20},
	} {
		cfg, err := ProcessSchedConfig(sc, sc.Strategy(tt.strategy))
		if err != nil {
			t.Fatal(err)
		}
		s := cfg.Services["api"]
		burst := s.RequestBurst
		if burst == 0 {
			burst = max(1, s.RequestsPerMinute/60) // sched's default
		}
		if !near(s.RequestsPerMinute, tt.rpm, 1e-9) || !near(burst, tt.burst, 1e-9) {
			t.Errorf("%s: %v requests/min, burst %v; want %v, %v", tt.strategy, s.RequestsPerMinute, burst, tt.rpm, tt.burst)
		}
	}
}
