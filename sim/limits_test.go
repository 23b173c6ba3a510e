package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/spec"
)

// TestLimitTraceAIMDByHand: a turn of far more calls than the limit keeps
// the service's queue full, and every attempt takes exactly one latency,
// so the attempts move in waves one round trip apart. AIMD adds one to its
// limit per limit successes, that is once per wave, and stops at its
// ceiling: the limit is k+1 from k round trips on, up to max, and the
// trace holds exactly these steps.
func TestLimitTraceAIMDByHand(t *testing.T) {
	const (
		latency = 100 * time.Millisecond
		ceiling = 10
	)
	sc := simtest.AIMDQueue(latency, 500, ceiling)
	res, err := Run(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want []results.LimitPoint
	for k := 0; k < ceiling; k++ {
		want = append(want, results.LimitPoint{T: (time.Duration(k) * latency).Seconds(), Limit: k + 1})
	}
	got := res.Strategies[0].LimitTrace["s"]
	if !slices.Equal(got, want) {
		t.Errorf("limit trace\n got %v\nwant %v", got, want)
	}
	if n := len(res.Strategies[0].LimitTrace); n != 1 {
		t.Errorf("traces for %d services, want 1 (the one with an adaptive limit)", n)
	}
}

// TestLimitTraceFollowsTheCore runs an AIMD strategy into a rate limit, so
// the limit is cut as well as raised, and checks at every attempt the
// service sees that the last step recorded so far is the limit the core
// holds then: the trace misses no step. Steps come in time order, each a
// change, and the results carry the same steps.
func TestLimitTraceFollowsTheCore(t *testing.T) {
	sc := simtest.AIMDQueue(50*time.Millisecond, 4000, 200)
	sc.Services[0].RequestsPerSecond = 100
	sc.Strategies[0].Retry = scenarios.Retry{Backoff: sched.BackoffFullJitter, Base: 50 * time.Millisecond, Cap: time.Second, Attempts: 8, HonorRetryAfter: true}
	e, err := NewEngine(sc, &sc.Strategies[0])
	if err != nil {
		t.Fatal(err)
	}
	checked, mismatched := 0, 0
	e.onArrive = func(now time.Duration, _ *fakeapi.Decision) {
		last := e.limits.Series["s"].Last()
		if last.T > now.Seconds() || last.Limit != e.procs[0].core.Limit("s") {
			if mismatched++; mismatched <= 3 {
				t.Errorf("at %v the core's limit is %d; last recorded step %+v", now, e.procs[0].core.Limit("s"), last)
			}
		}
		checked++
	}
	if !e.Run(context.Background(), nil) {
		t.Fatal("run did not complete")
	}
	steps := e.limits.Series["s"].Points()
	cuts := 0
	for i := 1; i < len(steps); i++ {
		if steps[i].T < steps[i-1].T || steps[i].Limit == steps[i-1].Limit {
			t.Fatalf("step %d %+v after %+v: not a change in time order", i, steps[i], steps[i-1])
		}
		if steps[i].Limit < steps[i-1].Limit {
			cuts++
		}
	}
	if cuts == 0 || len(steps) < 10 || checked == 0 {
		t.Fatalf("%d steps, %d cuts, %d attempts checked: the scenario should raise and cut the limit", len(steps), cuts, checked)
	}
	if got := e.result().LimitTrace["s"]; !slices.Equal(got, steps) {
		t.Errorf("the result's trace (%d points) differs from the %d recorded", len(got), len(steps))
	}
}

// TestLimitTraceBounded: a service whose limit steps a million times is
// held in bounded memory as the run goes, at an even density over time,
// and comes back within maxLimitPoints with its first and last steps and
// its lowest one.
func TestLimitTraceBounded(t *testing.T) {
	r := &collect.LimitRecorder{Services: []string{"s"}, Series: map[string]*collect.LimitSeries{"s": {Factor: 1}}}
	const n = 1_000_000
	low := n / 3
	most := 0
	for i := range n {
		l := 50 + int(20*math.Sin(float64(i)/30))
		if i == low {
			l = 1
		}
		r.Add("s", float64(i)/10, l)
		s := r.Series["s"]
		most = max(most, len(s.Kept)+len(s.Raw))
	}
	if most > 3*collect.LimitChunk {
		t.Errorf("held %d points at once, want at most %d", most, 3*collect.LimitChunk)
	}
	got := r.Trace()["s"]
	if len(got) > collect.MaxLimitPoints || len(got) < collect.MaxLimitPoints/2 {
		t.Fatalf("%d points, want at most %d and not far fewer", len(got), collect.MaxLimitPoints)
	}
	first, last := results.LimitPoint{T: 0, Limit: 50}, results.LimitPoint{T: float64(n-1) / 10, Limit: 50 + int(20*math.Sin(float64(n-1)/30))}
	if got[0] != first || got[len(got)-1] != last {
		t.Errorf("ends %+v…%+v, want %+v…%+v", got[0], got[len(got)-1], first, last)
	}
	if !slices.Contains(got, results.LimitPoint{T: float64(low) / 10, Limit: 1}) {
		t.Error("the lowest step was lost")
	}
	half := 0
	for _, p := range got {
		if p.T < float64(n)/20 {
			half++
		}
	}
	if share := float64(half) / float64(len(got)); share < 0.4 || share > 0.6 {
		t.Errorf("%.0f%% of the points fall in the first half of the run, want about half", 100*share)
	}
}

// TestLimitTraceOnlyForAdaptive: a static strategy leaves LimitTrace nil,
// and a run over several seeds keeps it out of SeedRuns.
func TestLimitTraceOnlyForAdaptive(t *testing.T) {
	sc := simtest.AIMDQueue(100*time.Millisecond, 50, 8)
	static := sc.Strategies[0]
	static.Name, static.Adaptive, static.MaxInFlight = "static", nil, 4
	sc.Strategies = append(sc.Strategies, static)
	res, err := RunSeeds(context.Background(), sc, Options{Seeds: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Strategies[0].LimitTrace == nil {
		t.Error("the adaptive strategy has no limit trace")
	}
	if res.Strategies[1].LimitTrace != nil {
		t.Errorf("the static strategy has a limit trace: %v", res.Strategies[1].LimitTrace)
	}
	for _, s := range res.Strategies {
		for i, sr := range s.SeedRuns {
			if sr.LimitTrace != nil {
				t.Errorf("%s: seed run %d keeps its limit trace", s.Name, i)
			}
		}
	}
}

// TestLimitTraceDeterministic: the same scenario and seed give the same
// limit trace, byte for byte in results.json.
func TestLimitTraceDeterministic(t *testing.T) {
	var out [2][]byte
	for i := range out {
		sc := simtest.AIMDQueue(50*time.Millisecond, 2000, 100)
		sc.Services[0].RequestsPerSecond = 100
		sc.Services[0].Latency = spec.Dist[time.Duration]{Kind: spec.DistLognormal, P50: 50 * time.Millisecond, P95: 200 * time.Millisecond}
		sc.Strategies[0].Retry = scenarios.Retry{Backoff: sched.BackoffFullJitter, Base: 50 * time.Millisecond, Cap: time.Second, Attempts: 8, HonorRetryAfter: true}
		res, err := Run(context.Background(), sc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Strategies[0].LimitTrace["s"]) < 10 {
			t.Fatalf("only %d steps: the scenario should move the limit", len(res.Strategies[0].LimitTrace["s"]))
		}
		if out[i], err = json.Marshal(res.Strategies[0].LimitTrace); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("two runs of one scenario and seed recorded different limit traces")
	}
}
