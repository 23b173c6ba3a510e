package sim

import (
	"testing"
	"time"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/spec"
)

// pair is two sessions of one turn each, both calling tool t at time 0,
// on a service whose every request takes 100 ms and which answers a write
// that overlaps another write to its resource with 409.
func pair(kind scenarios.Kind, serialize bool, retry scenarios.Retry) *scenarios.Scenario {
	return &scenarios.Scenario{
		Name: "pair", Seed: 1, Duration: time.Minute,
		Workload: scenarios.Workload{
			Sessions: 2, Turns: 1, Think: spec.Constant(time.Duration(0)),
			Calls: []scenarios.CallGroup{{Tool: "t", Count: spec.Constant(1.0), Probability: 1}},
		},
		Services: []scenarios.Service{{Name: "s", Latency: spec.Constant(100 * time.Millisecond), Headers: spec.HeadersNone,
			Faults: spec.Faults{Conflict: 1}}},
		Tools:      []scenarios.Tool{{Name: "t", Service: "s", Tokens: spec.Constant(0.0), Kind: kind, Resource: "r"}},
		Strategies: []scenarios.Strategy{{Name: "x", SerializeWrites: serialize, Retry: retry}},
	}
}

// TestEngineConflictTimes follows two writes to one resource that start
// together, through the model and the scheduler, at exact virtual times.
// The first arrival holds the resource from 0 to 100 ms; the second is
// answered 409 at 100 ms and retried after the backoff, then takes 100 ms.
func TestEngineConflictTimes(t *testing.T) {
	none := scenarios.Retry{Backoff: sched.BackoffNone, Attempts: 3}
	expo := scenarios.Retry{Backoff: sched.BackoffExponential, Base: time.Second, Cap: time.Minute, Attempts: 3}
	tests := []struct {
		name      string
		kind      scenarios.Kind
		serialize bool
		retry     scenarios.Retry
		// wantFinish is when the second call's last attempt ends.
		wantFinish              time.Duration
		wantAttempts, wantConfl int64
	}{
		{"no backoff: retried at 100 ms, done at 200 ms", scenarios.KindWrite, false, none, 200 * time.Millisecond, 3, 1},
		{"exponential from 1 s: retried at 1.1 s, done at 1.2 s", scenarios.KindWrite, false, expo, 1200 * time.Millisecond, 3, 1},
		{"reads never conflict: both done at 100 ms", scenarios.KindRead, false, none, 100 * time.Millisecond, 2, 0},
		{"serialized writes never overlap: the second runs from 100 ms", scenarios.KindWrite, true, none, 200 * time.Millisecond, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := pair(tt.kind, tt.serialize, tt.retry)
			e := runOne(t, sc)
			r := e.result()
			if r.Attempts != tt.wantAttempts || r.Conflicts != tt.wantConfl || r.Failed != 0 || r.WriteRaces != 0 {
				t.Fatalf("attempts %d, conflicts %d, failed %d, races %d; want %d, %d, 0, 0",
					r.Attempts, r.Conflicts, r.Failed, r.WriteRaces, tt.wantAttempts, tt.wantConfl)
			}
			if want := tt.wantFinish.Seconds(); r.FinishS != want {
				t.Fatalf("finish_s %v, want %v", r.FinishS, want)
			}
		})
	}
}

// TestFinishSOnlyForAFiniteWorkload checks that finish_s is absent when
// sessions run turns until the duration ends.
func TestFinishSOnlyForAFiniteWorkload(t *testing.T) {
	sc := pair(scenarios.KindRead, true, scenarios.Retry{})
	sc.Workload.Turns = 0
	sc.Workload.Think = spec.Constant(time.Second)
	if r := runOne(t, sc).result(); r.FinishS != 0 || r.Turns < 100 {
		t.Fatalf("finish_s %v after %d turns of an endless workload, want 0", r.FinishS, r.Turns)
	}
}

// TestContentionOrdering runs the contention built-in (virtual time, its
// own seed) and checks what the theory of backoff under contention
// predicts, and what holds over seeds 1 to 12 as well: every jittered
// backoff sends far fewer attempts than no backoff and finishes sooner
// than exponential backoff without jitter, whose retries collide again in
// step; without backoff calls run out of attempts, with jitter none do.
func TestContentionOrdering(t *testing.T) {
	by := map[string]results.StrategyResult{}
	for _, s := range runBuiltin(t, "contention").Strategies {
		by[s.Name] = s
		if s.FinishS == 0 || s.Conflicts == 0 || s.WriteRaces != 0 {
			t.Fatalf("%s: finish_s %v, %d conflicts, %d races; want a finish time, conflicts and no races", s.Name, s.FinishS, s.Conflicts, s.WriteRaces)
		}
		t.Logf("%-20s %5d attempts, %5d conflicts, finished at %6.1f s, %d failed", s.Name, s.Attempts, s.Conflicts, s.FinishS, s.Failed)
	}
	none, expo := by["none"], by["exponential"]
	if none.Failed == 0 {
		t.Errorf("no backoff: no call gave up, want some to run out of attempts")
	}
	for _, name := range []string{"full-jitter", "equal-jitter", "decorrelated-jitter"} {
		s := by[name]
		if s.Attempts >= none.Attempts {
			t.Errorf("%s: %d attempts, not fewer than no backoff's %d", name, s.Attempts, none.Attempts)
		}
		if s.FinishS >= expo.FinishS {
			t.Errorf("%s: finished at %v s, not before exponential without jitter at %v s", name, s.FinishS, expo.FinishS)
		}
		if s.Failed != 0 {
			t.Errorf("%s: %d calls gave up, want none", name, s.Failed)
		}
	}
}
