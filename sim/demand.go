package sim

import (
	"context"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
)

// Demand measures the turns per second the scenario's workload offers when
// nothing holds it back: every service without rate or concurrency limits
// and without faults, and every turn's calls issued at once. An open
// workload offers its arrival rate; a closed one offers as many turns as its
// sessions complete between thinks, which this runs the simulator to find
// (the turn time of the slowest call of each turn is not a closed form).
//
// Compare it with what a limit sustains: a workload offering more will
// queue or fail turns under any concurrency cap.
func Demand(ctx context.Context, sc *scenarios.Scenario, opts Options) (turnsPerS float64, err error) {
	if sc.Workload.Sessions == 0 {
		return sc.Workload.ArrivalRate, nil
	}
	c := *sc
	c.Services = make([]scenarios.Service, len(sc.Services))
	for i, svc := range sc.Services {
		svc.RequestsPerSecond, svc.RequestsPerMinute, svc.TokensPerMinute, svc.MaxConcurrent, svc.Burst = 0, 0, 0, 0, 0
		svc.Faults = spec.Faults{SlowFirstByte: svc.Faults.SlowFirstByte} // a latency, not a failure
		c.Services[i] = svc
	}
	c.Strategies = []scenarios.Strategy{{Name: "no limits"}}
	o := opts
	o.Strategies, o.Progress = nil, nil // the caller's progress bars know no such strategy
	res, err := Run(ctx, &c, o)
	if err != nil {
		return 0, err
	}
	// Every turn begun counts, those still running at the end too: the
	// demand is what the sessions start.
	st := res.Strategies[0]
	return round6(float64(st.Turns+st.UnfinishedTurns) / res.DurationS), nil
}
