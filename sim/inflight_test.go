package sim

import (
	"testing"

	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/sched"
)

// inFlight finds an attempt the Core cancels from its call's meta, and in
// the whole slab when the meta no longer names it (a promoted hedge that
// was hedged in turn); it never returns an attempt the client stopped
// waiting for, nor another process's attempt with the same id.
func TestInFlightFindsTheCancelledAttempt(t *testing.T) {
	e := &engine{p: 1}
	e.slab = []attempt{
		{id: 7, proc: 0},             // another process's attempt 7
		{id: 7, proc: 1, dead: true}, // cancelled already
		{id: 9, proc: 1},             // the call's first attempt, promoted hedge
		{id: 8, proc: 1},             // its latest attempt
		{id: 10, proc: 1},            // its latest hedge
		{id: 7, proc: 1},             // attempt 7 of process 1, in flight
	}
	meta := &agent.CallMeta{Slab: [2]int32{3, 4}}
	for _, tt := range []struct {
		id   sched.AttemptID
		want int32
		ok   bool
	}{
		{8, 3, true},  // the meta's attempt
		{10, 4, true}, // the meta's hedge
		{9, 2, true},  // not in the meta: found in the slab
		{7, 5, true},  // neither the dead entry nor process 0's
		{11, 0, false},
	} {
		if i, ok := e.inFlight(meta, tt.id); i != tt.want || ok != tt.ok {
			t.Errorf("inFlight(attempt %d) = %d, %v; want %d, %v", tt.id, i, ok, tt.want, tt.ok)
		}
	}
	e.slab[5].dead = true
	if i, ok := e.inFlight(meta, 7); ok {
		t.Errorf("inFlight(7) = %d after its cancel; want not in flight", i)
	}
}
