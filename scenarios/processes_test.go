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
	want := Quota{Mode: QuotaShared, RTT: DefaultQuotaRTT, Lease: time.Second, LeaseMax: 1.0 / 3}
	if q := sc.Strategies[0].Quota; q != want {
		t.Errorf("quota %+v, want %+v (defaults filled in)", q, want)
	}
	if q := sc.Strategies[1].Quota; q != (Quota{Mode: QuotaFull}) {
		t.Errorf("a strategy without quota has %+v, want mode full", q)
	}
}
