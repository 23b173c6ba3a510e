package decision

import (
	"context"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// PlanServices computes the recommendation arithmetic for every service the
// scenario's workload calls, in scenario order, at the given headroom (0:
// DefaultHeadroom). Services it cannot plan (no limits, say) come
// back in unplanned with the reason.
func PlanServices(sc *scenarios.Scenario, headroom float64) (plans []Plan, unplanned map[string]error) {
	for _, l := range setup.Loads(sc) {
		p, err := Recommend(Service{PerSecond: PerSecond(sc.Service(l.Name)),
			Name: l.Name, RPM: l.RequestsPerMinute, TPM: l.TokensPerMinute, MaxConcurrent: l.MaxConcurrent,
			TokensPerCall: l.TokensPerCall, MeanLatency: l.MeanLatency, RoundTrip: l.RoundTrip, CallsPerTurn: l.CallsPerTurn, Headroom: headroom,
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

// Dominant returns the plan of the service a turn calls most, or nil.
func Dominant(plans []Plan) *Plan {
	var d *Plan
	for i := range plans {
		if d == nil || plans[i].Service.CallsPerTurn > d.Service.CallsPerTurn {
			d = &plans[i]
		}
	}
	return d
}

// measureLoad measures what the scenario's workload offers with no limit
// holding it back (sim.Demand, with o's seed and duration) and sets it
// against what the plans sustain; nil without plans or with o.NoLoad,
// when it simulates nothing.
func measureLoad(ctx context.Context, sc *scenarios.Scenario, o Options, plans []Plan) (*LoadCheck, error) {
	if len(plans) == 0 || o.NoLoad {
		return nil, nil
	}
	demand, err := sim.Demand(ctx, sc, sim.Options{Seed: o.Seed, Duration: o.Duration, Cache: o.Cache, Parallel: o.Parallel})
	if err != nil {
		return nil, err
	}
	l, ok := CheckLoad(demand, sc.Workload.Sessions, plans)
	if !ok {
		return nil, nil
	}
	return &l, nil
}
