package main

import (
	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// planServices computes the recommendation arithmetic for every service the
// scenario's workload calls, in scenario order, at the given headroom (0:
// reports.DefaultHeadroom). Services it cannot plan (no limits, say) come
// back in unplanned with the reason.
func planServices(sc *scenarios.Scenario, headroom float64) (plans []reports.Plan, unplanned map[string]error) {
	for _, l := range sim.Loads(sc) {
		p, err := reports.Recommend(reports.Service{
			Name: l.Name, RPM: l.RequestsPerMinute, TPM: l.TokensPerMinute, MaxConcurrent: l.MaxConcurrent,
			TokensPerCall: l.TokensPerCall, MeanLatency: l.MeanLatency, CallsPerTurn: l.CallsPerTurn, Headroom: headroom,
		})
		if err != nil {
			if unplanned == nil {
				unplanned = map[string]error{}
			}
			unplanned[l.Name] = err
			continue
		}
		plans = append(plans, p)
	}
	return plans, unplanned
}

// dominant returns the plan of the service a turn calls most, or nil.
func dominant(plans []reports.Plan) *reports.Plan {
	var d *reports.Plan
	for i := range plans {
		if d == nil || plans[i].Service.CallsPerTurn > d.Service.CallsPerTurn {
			d = &plans[i]
		}
	}
	return d
}
