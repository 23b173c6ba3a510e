package sim

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/spec"
)

// TestEventLimitsInVirtualRun: a 10/s service offered 100 calls a second
// by a strategy that sends everything admits 10 a second; an event halving
// its limits from 10 s for 5 s admits 5 a second exactly in those seconds,
// and 10 again from 15 s.
func TestEventLimitsInVirtualRun(t *testing.T) {
	sc := simtest.MustParse(t, `
duration = "20s"
[workload]
arrival_rate = 100
arrival = "constant"
calls = [ { tool = "t" } ]
[services.api]
rps = 10
latency = "1ms"
[tools.t]
service = "api"
[[strategy]]
name = "all"
[[events]]
service = "api"
at = "10s"
for = "5s"
limit_factor = 0.5
`)
	e, err := NewEngine(sc, &sc.Strategies[0])
	if err != nil {
		t.Fatal(err)
	}
	admitted := make([]int, 20)
	e.onArrive = func(now time.Duration, d *fakeapi.Decision) {
		if d.Admitted() && now < 20*time.Second {
			admitted[now/time.Second]++
		}
	}
	e.Run(context.Background(), nil)
	for sec := 2; sec < 20; sec++ {
		want := 10
		if sec >= 10 && sec < 15 {
			want = 5
		}
		if admitted[sec] != want {
			t.Errorf("second %d admitted %d, want %d (all: %v)", sec, admitted[sec], want, admitted)
		}
	}
}

// TestEventStallLatency: an open workload of 100 calls a second, one turn
// of one call each, arriving exactly every 10 ms, served one at a time
// (max_in_flight = 1) by a service taking exactly 1 ms, freezes for 1 s at
// t = 50 s. One at a time is the client's cap rather than the service's
// max_concurrent: a service cap would refuse the calls that arrive during
// the stall with 429s, while a client cap queues them, so the backlog the
// test derives builds up and drains. Turn latency counts from the intended
// arrival instant, so the queueing behind the stall counts.
//
// Derivation, with stall start S = 50 s, length D = 1 s, service time
// s = 1 ms, arrival gap a = 10 ms, N = 10,000 arrivals in the 100 s run:
//   - the call arriving at S (j = 0) is admitted into the frozen service and
//     completes at S + D + s;
//   - the call arriving at S + j·a waits for the one before it, which
//     completes at S + D + j·s, as long as S + j·a < S + D + j·s, that is
//     j·(a − s) < D; each such call completes s after the one before it,
//     at S + D + (j+1)·s, with latency L_j = D + (j+1)·s − j·a;
//   - J, the last j in the backlog, is the largest j with j·(a − s) < D;
//     every other call finds the service idle and takes s.
//
// So the max is L_0 = D + s, the mean is (Σ L_j + (N − J − 1)·s) ÷ N, and
// the p99 is the ⌈0.99·N⌉-th smallest latency: past the N − J − 1 calls of
// s, it is the r-th smallest L_j, which (L_j falls as j grows) is L_{J−r+1}.
func TestEventStallLatency(t *testing.T) {
	sc := simtest.MustParse(t, `
duration = "100s"
[workload]
arrival_rate = 100
arrival = "constant"
calls = [ { tool = "t" } ]
[services.api]
latency = "1ms"
network_delay = "0s"  # the arithmetic below counts the service alone
[tools.t]
service = "api"
[[strategy]]
name = "one-at-a-time"
max_in_flight = 1
[[events]]
service = "api"
at = "50s"
for = "1s"
stall = true
`)
	const (
		D = time.Second
		s = time.Millisecond
		a = 10 * time.Millisecond
		N = int64(100 * time.Second / a)
	)
	J := int64((D - 1) / (a - s))
	L := func(j int64) time.Duration { return D + time.Duration(j+1)*s - time.Duration(j)*a }
	var sum time.Duration
	for j := int64(0); j <= J; j++ {
		sum += L(j)
	}
	sum += time.Duration(N-J-1) * s
	wantMean := time.Duration(int64(sum) / N)
	wantMax := L(0)
	rank := (99*N + 99) / 100 // ⌈0.99·N⌉
	var wantP99 time.Duration
	if r := rank - (N - J - 1); r <= 0 {
		wantP99 = s
	} else {
		wantP99 = L(J - r + 1)
	}
	t.Logf("derived: J = %d calls after the first wait, mean %v, p99 %v, max %v", J, wantMean, wantP99, wantMax)

	res := runOnly(t, sc)
	st := res.Strategies[0]
	if st.Turns != N || st.FailedTurns != 0 {
		t.Fatalf("turns %d (failed %d), want %d", st.Turns, st.FailedTurns, N)
	}
	got := st.TurnLatencyMs
	// Mean and max are exact, in ms to the microsecond. Quantiles come from
	// the collector's HdrHistogram, which reports the top of the bucket
	// holding the nearest-rank value (less than 0.1% above it): the derived
	// p99 must be reported as its bucket's top.
	if got.Mean != collect.Ms(wantMean) || got.Max != collect.Ms(wantMax) {
		t.Errorf("mean %v ms, max %v ms; want %v, %v", got.Mean, got.Max, collect.Ms(wantMean), collect.Ms(wantMax))
	}
	top := hdrhistogram.New(1, int64(collect.HistMax), collect.HDRSignificantDigits)
	_ = top.RecordValue(int64(wantP99))
	if want := collect.Ms(time.Duration(top.Max())); got.P99 != want {
		t.Errorf("p99 %v ms, want %v (the histogram bucket of %v)", got.P99, want, wantP99)
	}
	if len(res.Events) != 1 || res.Events[0] != (results.EventSpan{Service: "api", Kind: "stall", StartS: 50, EndS: 51, Label: "stall"}) {
		t.Errorf("events = %+v", res.Events)
	}
}

// TestEventLabels: each kind of change in words, and spans in start order.
func TestEventLabels(t *testing.T) {
	sc := simtest.MustParse(t, `
duration = "10m"
[workload]
sessions = 1
calls = [ { tool = "t" } ]
[services.api]
rps = 10
headers = "anthropic"
[services.other]
[tools.t]
service = "api"
[[strategy]]
name = "s"
[[events]]
service = "api"
at = "5m"
for = "1m"
outage = true
[[events]]
service = "api"
at = "1m"
for = "1m"
limit_factor = 0.5
latency_factor = 2
error_rate = 0.2
overload_rate = 0.125
[[events]]
service = "other"
at = "2m"
for = "30s"
rpm = 300
max_concurrent = 4
[[events]]
service = "other"
at = "3m"
for = "1s"
stall = true
[[events]]
service = "other"
at = "4m"
for = "1s"
outage = true
`)
	want := []results.EventSpan{
		{Service: "api", Kind: "limits+latency+error_rate+overload_rate", StartS: 60, EndS: 120, Label: "limits ×0.5, latency ×2, errors 20%, overload 12.5%"},
		{Service: "other", Kind: "limits", StartS: 120, EndS: 150, Label: "rpm 300, max_concurrent 4"},
		{Service: "other", Kind: "stall", StartS: 180, EndS: 181, Label: "stall"},
		{Service: "other", Kind: "outage", StartS: 240, EndS: 241, Label: "outage 503"},
		{Service: "api", Kind: "outage", StartS: 300, EndS: 360, Label: "outage 529"},
	}
	got := setup.EventSpans(sc)
	if len(got) != len(want) {
		t.Fatalf("spans %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("span %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Absolute limits become the whole set the model enforces: the
	// service's own rps (10, burst one second's worth) with the event's.
	ev := setup.ModelEvents(sc, sc.Service("api"))
	if len(ev) != 2 || ev[1].Limits == nil || ev[1].Limits.Factor != 0.5 || !ev[0].Outage {
		t.Errorf("api model events %+v", ev)
	}
	ev = setup.ModelEvents(sc, sc.Service("other"))
	if l := ev[0].Limits; l == nil || *l != (spec.EventLimits{RPM: 300, MaxConcurrent: 4, Burst: 5}) {
		t.Errorf("other's absolute limits %+v", l)
	}
}

// TestEventsDeterministic: a run with events of every kind, some drawn at
// random (error and overload rates), gives the same results twice from one
// seed, and the events change the run.
func TestEventsDeterministic(t *testing.T) {
	const base = `
seed = 5
duration = "2m"
[workload]
arrival_rate = 20
calls = [ { tool = "t", count = 3 } ]
[services.api]
rps = 30
max_concurrent = 20
latency = { dist = "uniform", min = "50ms", max = "300ms" }
[tools.t]
service = "api"
[[strategy]]
name = "retrying"
max_in_flight = 16
retry = { backoff = "full-jitter", base = "100ms", cap = "2s", attempts = 4 }
`
	const events = `
[[events]]
service = "api"
at = "10s"
for = "20s"
limit_factor = 0.5
error_rate = 0.3
[[events]]
service = "api"
at = "20s"
for = "20s"
latency_factor = 3
overload_rate = 0.2
[[events]]
service = "api"
at = "50s"
for = "2s"
stall = true
[[events]]
service = "api"
at = "70s"
for = "5s"
outage = true
[[events]]
service = "api"
at = "90s"
for = "10s"
rps = 5
`
	sc := simtest.MustParse(t, base+events)
	a, b := runOnly(t, sc), runOnly(t, sc)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("two runs from one seed differ")
	}
	plain := runOnly(t, simtest.MustParse(t, base))
	if a.Strategies[0].Failed == plain.Strategies[0].Failed && a.Strategies[0].Attempts == plain.Strategies[0].Attempts {
		t.Errorf("the events changed nothing: %+v", a.Strategies[0])
	}
	if got := setup.Scale(sc, 0.1).Events[4]; got.At != 9*time.Second || got.For != time.Second || got.RequestsPerSecond != 50 {
		t.Errorf("scaled event %+v", got)
	}
}
