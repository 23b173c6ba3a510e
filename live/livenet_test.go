package live

import (
	"context"
	"testing"

	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/sched"
)

// A cancel before the delay out ends sends nothing: the executor is not
// called.
func TestLiveDelayCancelledOnTheWayOut(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "d"
duration = "1s"
[workload]
sessions = 1
calls = [ { tool = "t", count = 1 } ]
[services.s]
network_delay = "1h"
[tools.t]
service = "s"
[[strategy]]
name = "s"
`)
	l := &liveRun{net: newLiveNet(sc)}
	called := 0
	exec := l.delayed(func(context.Context, *sched.Call, int) sched.Outcome {
		called++
		return sched.Outcome{Class: sched.ClassSuccess}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := exec(ctx, &sched.Call{Payload: &agent.CallMeta{Svc: 0}}, 1)
	if called != 0 || o.Class != sched.ClassCancelled {
		t.Errorf("executor called %d times, outcome %v; want 0 and cancelled", called, o.Class)
	}
}
