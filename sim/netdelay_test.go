package sim

import (
	"context"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/scenarios"
)

// A call with a constant service time and a constant network delay takes
// the service time plus the delay out and the delay back, and the service
// sees it one delay after it left.
func TestNetworkDelayAddsBothWays(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "delay"
duration = "1m"
[workload]
sessions = 1
turns = 3
think = "1s"
calls = [ { tool = "t", count = 1 } ]
[services.s]
latency = "100ms"
network_delay = "2ms"
[tools.t]
service = "s"
[[strategy]]
name = "all"
`)
	e, err := NewEngine(sc, &sc.Strategies[0])
	if err != nil {
		t.Fatal(err)
	}
	var arrived []time.Duration
	e.onArrive = func(now time.Duration, _ *fakeapi.Decision) { arrived = append(arrived, now) }
	e.Run(context.Background(), nil)
	r := e.m.StrategyResultFrom("all", 0, nil, 0)
	const out, service, back = 2 * time.Millisecond, 100 * time.Millisecond, 2 * time.Millisecond
	turn := out + service + back
	if r.Turns != 3 || r.TurnLatencyMs.Mean != collect.Ms(turn) || r.TurnLatencyMs.Max != collect.Ms(turn) || r.CallLatencyMs.Max != collect.Ms(turn) {
		t.Errorf("%d turns of %v ms (mean; max %v), calls up to %v ms; want 3 turns and calls of %v", r.Turns, r.TurnLatencyMs.Mean, r.TurnLatencyMs.Max, r.CallLatencyMs.Max, turn)
	}
	// Turn n starts after n−1 turns and n−1 thoughts; its call arrives one delay later.
	for n, at := range arrived {
		if want := time.Duration(n)*(turn+time.Second) + out; at != want {
			t.Errorf("call %d reached the service at %v; want %v", n+1, at, want)
		}
	}
}

// The calls of one turn leave together but, each with its own delay, do
// not reach the service at one instant (the default delay: no key).
func TestCallsOfATurnArriveApart(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "apart"
duration = "1s"
[workload]
sessions = 1
turns = 1
calls = [ { tool = "t", count = 8 } ]
[services.s]
latency = "100ms"
[tools.t]
service = "s"
[[strategy]]
name = "all"
`)
	e, err := NewEngine(sc, &sc.Strategies[0])
	if err != nil {
		t.Fatal(err)
	}
	seen := map[time.Duration]bool{}
	e.onArrive = func(now time.Duration, _ *fakeapi.Decision) { seen[now] = true }
	e.Run(context.Background(), nil)
	if len(seen) != 8 {
		t.Errorf("8 calls of a turn reached the service at %d instants; want 8", len(seen))
	}
}

// A rejected attempt is in flight for its round trip, not for no time at
// all: turns arriving every millisecond, each call rejected at once and
// 4.6 ms away each way, keep 10 attempts in flight (the one starting and
// the 9 of the last 9.2 ms).
func TestRejectionsHoldTheirPlaceInFlight(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "herd"
duration = "1s"
[workload]
arrival_rate = "1000/s"
arrival = "constant"
calls = [ { tool = "t", count = 1 } ]
[services.s]
rpm = 1
network_delay = "4.6ms"
[tools.t]
service = "s"
[[strategy]]
name = "once"
retry = { attempts = 1 }
`)
	e := runOne(t, sc)
	r := e.m.StrategyResultFrom("once", 0, nil, 0)
	const trip = 9.2 // ms out and back
	if r.RateLimited < 990 || r.PeakInFlight == nil {
		t.Fatalf("%d 429s; want all but the first of 1000 calls rejected", r.RateLimited)
	}
	if got := e.m.Peak[0]; got != 10 {
		t.Errorf("peak in flight %d; want 10", got)
	}
	// L for attempts: each of the 1000 attempts, sent at k ms, is in
	// flight for the round trip or until the window ends at 1000 ms.
	var area float64 // attempt-ms
	for k := range 1000 {
		area += min(trip, 1000-float64(k))
	}
	if want := setup.Round6(area / 1000); r.AttemptsInService != want {
		t.Errorf("attempts in flight on average %v; want %v", r.AttemptsInService, want)
	}
}

// A cancel on the way out at the transport keeps the request from the
// service; at the reader the request goes on and the service works on it
// for nobody.
func TestCancelOnTheWayOut(t *testing.T) {
	tests := []struct {
		cancelAt    string
		wantArrived int
		wantWastedS float64
	}{
		{cancelAt: "transport", wantArrived: 0, wantWastedS: 0},
		{cancelAt: "reader", wantArrived: 3, wantWastedS: 0.3},
	}
	for _, tt := range tests {
		t.Run(tt.cancelAt, func(t *testing.T) {
			sc := simtest.MustParse(t, `
name = "early-cancel"
duration = "10s"
[workload]
sessions = 1
turns = 3
think = "1s"
calls = [ { tool = "t", count = 1 } ]
[workload.cancel]
parent_timeout = "1ms"
[services.s]
latency = "100ms"
network_delay = "5ms"
[tools.t]
service = "s"
[[strategy]]
name = "s"
cancel_at = "`+tt.cancelAt+`"
`)
			e, err := NewEngine(sc, &sc.Strategies[0])
			if err != nil {
				t.Fatal(err)
			}
			arrived := 0
			e.onArrive = func(time.Duration, *fakeapi.Decision) { arrived++ }
			e.Run(context.Background(), nil)
			r := e.m.StrategyResult("s", 0, e.models, 0)
			if arrived != tt.wantArrived || r.WastedWorkS != tt.wantWastedS || r.FailedTurns != 3 {
				t.Errorf("%d requests reached the service, %v s wasted, %d failed turns; want %d, %v, 3",
					arrived, r.WastedWorkS, r.FailedTurns, tt.wantArrived, tt.wantWastedS)
			}
			if len(e.free) != len(e.slab) {
				t.Errorf("%d of %d slab entries free; want none left in flight", len(e.free), len(e.slab))
			}
		})
	}
}

// With the sliding window of research-agent, the 8 calls of an all-8 turn
// no longer meet the window in lock-step: a failed turn is not every call
// failing (exactly 8.0 calls per failed turn before the delay).
func TestSlidingWindowTurnsFailCallByCall(t *testing.T) {
	sc, err := scenarios.Builtin("research-agent")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Options{Strategies: []string{"all-8"}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Strategies[0]
	if s.FailedTurns == 0 {
		t.Fatal("no failed turns")
	}
	if per := float64(s.Failed) / float64(s.FailedTurns); per > 6 {
		t.Errorf("%d failed calls in %d failed turns: %.2f per failed turn; want well under 8", s.Failed, s.FailedTurns, per)
	}
}
