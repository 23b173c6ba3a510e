package decision

import (
	"testing"
	"time"

	"github.com/simbench/simbench/scenarios"
)

// TestPlanCountsTheNetwork checks that the arithmetic's time in flight is
// the service time plus the default network delay there and back, as the
// simulator holds an attempt: a constant 400 ms service at 10,000
// requests/min and headroom 0.7 gives 47 in flight, not the 46 of the
// service time alone.
func TestPlanCountsTheNetwork(t *testing.T) {
	sc, err := scenarios.Parse("net.toml", []byte(`
name = "net"
duration = "1m"
[workload]
sessions = 1
calls = [ { tool = "t", count = 8 } ]
[services.s]
rpm = 10000
latency = { dist = "constant", value = "400ms" }
[tools.t]
service = "s"
[[strategy]]
name = "a"
`))
	if err != nil {
		t.Fatal(err)
	}
	plans, unplanned := PlanServices(sc, 0.7)
	if len(plans) != 1 || len(unplanned) != 0 {
		t.Fatalf("plans %v, unplanned %v", plans, unplanned)
	}
	p := plans[0]
	if rt := p.Service.RoundTrip; rt < 3*time.Millisecond || rt > 4*time.Millisecond {
		t.Errorf("round trip %v, want the default delay's mean twice (about 3.2 ms)", rt)
	}
	if p.MaxInFlight != 47 {
		t.Errorf("cap %d (Little's-law %.3f), want 47", p.MaxInFlight, p.LittleCap)
	}
}
