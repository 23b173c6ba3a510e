package scenarios

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// TestProcessSessions checks the apportionment of sessions to processes:
// the counts add up, each is within one of its exact share, and the
// session order gives each process exactly its count, spread out.
func TestProcessSessions(t *testing.T) {
	tests := []struct {
		sessions int
		shares   []float64
		want     []int
	}{
		{27, []float64{3, 2, 1, 1, 1, 1}, []int{9, 6, 3, 3, 3, 3}},
		{10, []float64{3, 2, 1, 1, 1, 1}, []int{4, 2, 1, 1, 1, 1}}, // remainders .33 .22 .11 ×4: one left, to p1
		{5, []float64{1, 1, 1}, []int{2, 2, 1}},                    // equal remainders: the earlier processes first
		{4, nil, []int{4}},
		{3, []float64{1, 1, 1, 1}, []int{1, 1, 1, 0}},
	}
	for _, tt := range tests {
		w := Workload{Sessions: tt.sessions, Processes: max(len(tt.shares), 1), ProcessShares: tt.shares}
		got := w.ProcessSessions()
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%d sessions by %v: %v, want %v", tt.sessions, tt.shares, got, tt.want)
		}
		for p, n := range got {
			if exact := w.Shares()[p] * float64(tt.sessions); math.Abs(float64(n)-exact) >= 1 {
				t.Errorf("%d sessions by %v: process %d has %d, exact share %v", tt.sessions, tt.shares, p, n, exact)
			}
		}
		order := w.SessionProcesses()
		if len(order) != tt.sessions {
			t.Fatalf("SessionProcesses has %d entries, want %d", len(order), tt.sessions)
		}
		counts := make([]int, len(got))
		for _, p := range order {
			counts[p]++
		}
		if fmt.Sprint(counts) != fmt.Sprint(got) {
			t.Errorf("%d sessions by %v: the order %v gives counts %v, want %v", tt.sessions, tt.shares, order, counts, got)
		}
	}
	// Interleaved: the first process's 9 sessions of 27 are spread over
	// the order, not packed at its start.
	w := Workload{Sessions: 27, Processes: 6, ProcessShares: []float64{3, 2, 1, 1, 1, 1}}
	order := w.SessionProcesses()
	if first := order[:9]; strings.Count(fmt.Sprint(first), "0") == 9 {
		t.Errorf("the order %v packs process 0 at the start", order)
	}
}

// TestQuotaProblems checks the processes and quota keys' own rules, and
// what a valid quota becomes.
func TestQuotaProblems(t *testing.T) {
	const head = "name = \"a\"\nduration = \"1m\"\n[services.s]\nrpm = 60\n[tools.t]\nservice = \"s\"\n"
	const workload = "[workload]\nsessions = 6\ncalls = [ { tool = \"t\", count = 1 } ]\n"
	for _, tc := range []struct{ wl, strategy, want string }{
		{"processes = 3\nprocess_shares = [1, 2]\n", "", "process_shares: has 2 weights for 3 processes"},
		{"process_shares = [1, 0]\n", "", "process_shares[1]: is 0; a weight must be greater than 0"},
		{"process_shares = 2\n", "", "process_shares: wants a non-empty array of numbers"},
		{"processes = 0\n", "", "processes: is 0; it must be at least 1"},
		{"processes = 5000\n", "", "processes: is 5000; it must be at most 1024"},
		{"", `quota = { mode = "split" }`, `mode: "split" divides the token buckets' limits, so it needs token_bucket = true`},
		{"", `quota = { mode = "full", rtt = "1ms" }`, `rtt: only applies with mode = "shared"`},
		{"", `quota = { mode = "shared", lease_max = 0.5 }`, "lease_max: only applies with a lease"},
		{"", `quota = { mode = "shared" }`, `mode: "shared" shares the token buckets' limits (as sched.WithQuota does), so it needs token_bucket = true`},
		{"", `quota = { rtt = "1ms" }`, "mode: is required"},
		{"", `quota = { mode = "shared", rtt = "1ns" }`, "rtt: is 1ns; a round trip to a shared store takes at least 10µs"},
		{"", `quota = { mode = "redis" }`, `unknown value "redis"`},
		{"", `quota = { mode = "full", timeout = "10ms" }`, `a.toml:12:26: strategy[0].quota.timeout: only applies with mode = "shared"`},
		{"", `quota = { mode = "split", outage_at = "1s", outage_for = "1s" }`, `strategy[0].quota.outage_at: only applies with mode = "shared"`},
		{"", `quota = { mode = "shared", timeout = "0s" }`, "strategy[0].quota.timeout: is 0s; a round trip needs a timeout above 0"},
		{"", `quota = { mode = "shared", probe_every = "0s" }`, "strategy[0].quota.probe_every: is 0s; a process whose store is unreachable tries it again this often"},
		{"", `quota = { mode = "shared", fallback = "open" }`, `strategy[0].quota.fallback: unknown value "open"`},
		{"", `quota = { mode = "shared", outage_at = "10s" }`, "strategy[0].quota.outage_at: needs outage_for"},
		{"", `quota = { mode = "shared", outage_for = "10s" }`, "strategy[0].quota.outage_for: needs outage_at"},
		{"", `quota = { mode = "shared", outage_at = "1s", outage_for = "0s" }`, "strategy[0].quota.outage_for: is 0s; an outage lasts more than 0"},
		{"", `quota = { mode = "shared", outage_at = "50s", outage_for = "20s" }`, "strategy[0].quota.outage_for: makes the outage end at 1m10s, after the run's duration 1m0s"},
		{"", `quota = { mode = "shared", outage = "hung" }`, "strategy[0].quota.outage: only applies with an outage"},
		{"", `quota = { mode = "shared", outage_at = "1s", outage_for = "1s", outage = "gone" }`, `strategy[0].quota.outage: unknown value "gone"`},
	} {
		src := head + workload + tc.wl + "[[strategy]]\nname = \"x\"\n" + tc.strategy + "\n"
		_, err := Parse("a.toml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %q: error %v, want it to say %q", tc.wl, tc.strategy, err, tc.want)
		}
	}
	sc, err := Parse("a.toml", []byte(head+workload+"process_shares = [2, 1, 1]\n[[strategy]]\nname = \"x\"\ntoken_bucket = true\nquota = { mode = \"shared\", lease = \"1s\" }\n[[strategy]]\nname = \"y\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := sc.Workload; w.Processes != 3 || fmt.Sprint(w.Shares()) != fmt.Sprint([]float64{0.5, 0.25, 0.25}) {
		t.Errorf("processes %d, shares %v; want 3 from the weights, [0.5 0.25 0.25]", w.Processes, w.Shares())
	}
	want := Quota{Mode: QuotaShared, RTT: DefaultQuotaRTT, Lease: time.Second,
		Timeout: DefaultQuotaTimeout, ProbeEvery: DefaultQuotaProbeEvery, Fallback: FallbackLocal}
	if q := sc.Strategies[0].Quota; q != want {
		t.Errorf("quota %+v, want %+v (defaults filled in)", q, want)
	}
	// An unset lease_max is an even part of the burst for the fleet that
	// runs, whatever processes the file says.
	for n, want := range map[int]float64{3: 1.0 / 3, 4: 0.25, 1: 1, 0: 1} {
		if got := sc.Strategies[0].Quota.LeaseShare(n); got != want {
			t.Errorf("LeaseShare(%d) = %g with lease_max unset, want %g", n, got, want)
		}
	}
	if got := (Quota{LeaseMax: 0.5}).LeaseShare(4); got != 0.5 {
		t.Errorf("LeaseShare(4) = %g with lease_max = 0.5, want 0.5", got)
	}
	if q := sc.Strategies[1].Quota; q != (Quota{Mode: QuotaFull}) {
		t.Errorf("a strategy without quota has %+v, want mode full", q)
	}
	sc, err = Parse("a.toml", []byte(head+workload+"processes = 2\n[[strategy]]\nname = \"x\"\ntoken_bucket = true\n"+
		"quota = { mode = \"shared\", timeout = \"20ms\", probe_every = \"2s\", fallback = \"closed\", outage_at = \"10s\", outage_for = \"30s\", outage = \"hung\" }\n"))
	if err != nil {
		t.Fatal(err)
	}
	want = Quota{Mode: QuotaShared, RTT: DefaultQuotaRTT, Timeout: 20 * time.Millisecond, ProbeEvery: 2 * time.Second, Fallback: FallbackClosed,
		OutageAt: 10 * time.Second, OutageFor: 30 * time.Second, Outage: OutageHung}
	if q := sc.Strategies[0].Quota; q != want || q.OutageEnd() != 40*time.Second {
		t.Errorf("quota %+v (outage ends at %v), want %+v (ending at 40s)", q, q.OutageEnd(), want)
	}
}
