package setup

import (
	"slices"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
)

// SchedConfig returns the scheduler configuration a strategy describes for
// the scenario's services. The caller sets Rand and Hook.
func SchedConfig(sc *scenarios.Scenario, st *scenarios.Strategy) (sched.Config, error) {
	cfg := sched.Config{
		MaxInFlight: st.MaxInFlight,
		Services:    make(map[string]sched.ServiceConfig, len(sc.Services)),
		MaxQueued:   st.MaxQueued,
		FanOut:      st.FanOut,
		FanOutMode:  st.FanOutMode,
		Join:        st.Join,
		Retry: sched.RetryPolicy{
			Backoff:          st.Retry.Backoff,
			Base:             st.Retry.Base,
			Cap:              st.Retry.Cap,
			MaxAttempts:      st.Retry.Attempts,
			Budget:           st.Retry.Budget,
			IgnoreRetryAfter: !st.Retry.HonorRetryAfter,
			RetryAfterJitter: st.Retry.RetryAfterJitter,
		},
		KeepSlotDuringBackoff: st.KeepSlotDuringBackoff,
		MaxRetryAfter:         st.Retry.MaxRetryAfter,
		OverMaxRetryAfter:     st.Retry.OverMaxRetryAfter,
		AttemptTimeout:        st.AttemptTimeout,
		CallTimeout:           st.CallTimeout,
		TurnTimeout:           st.TurnTimeout,
		TurnTokenBudget:       st.TokenBudget,
		TurnAttemptBudget:     st.AttemptBudget,
		Priorities:            schedPriorities(st),
	}
	if len(sc.Routes) > 0 {
		cfg.Routes = make(map[string]sched.RouteConfig, len(sc.Routes))
		for _, r := range sc.Routes {
			rc := sched.RouteConfig{Deployments: r.Deployments, Policy: r.Policy, FallBackAfter: r.FallBackAfter, CooldownAfter: r.CooldownAfter, Cooldown: r.Cooldown}
			if st.FallBackAfter != nil {
				rc.FallBackAfter = *st.FallBackAfter
			}
			cfg.Routes[r.Name] = rc
		}
	}
	if h := st.Hedge; h != nil {
		cfg.Hedge = &sched.HedgePolicy{After: h.After, Percentile: h.Percentile, Budget: h.Budget}
	}
	for _, svc := range sc.Services {
		s := sched.ServiceConfig{
			MaxInFlight:       st.MaxInFlightPerService[svc.Name],
			PauseOnRetryAfter: st.PauseOnRetryAfter,
		}
		if st.TokenBucket {
			s.RequestsPerMinute = svc.RequestsPerMinuteLimit()
			s.RequestBurst = svc.RequestBurst()
			s.TokensPerMinute = svc.TokensPerMinute
			s.Headroom = st.Headroom
		}
		if a := st.Adaptive; a != nil && (a.Services == nil || slices.Contains(a.Services, svc.Name)) {
			s.Adaptive = adaptiveConfig(a)
		}
		if b := st.RetryBudget; b != nil {
			// Each service gets its own copy, so its own budget.
			s.RetryBudget = &sched.RetryBudget{Ratio: b.Ratio, MinPerSecond: b.MinPerSecond, Max: b.Max}
		}
		s.HeaderSync = st.HeaderSync && st.TokenBucket
		cfg.Services[svc.Name] = s
	}
	return cfg, nil
}

// adaptiveConfig returns the sched form of a strategy's adaptive limit; each
// service gets its own copy, so its own limit.
func adaptiveConfig(a *scenarios.Adaptive) *sched.AdaptiveConfig {
	return &sched.AdaptiveConfig{
		Algorithm: a.Algorithm, Initial: a.Initial, Min: a.Min, Max: a.Max, Backoff: a.Decrease,
		Smoothing: a.Smoothing, Tolerance: a.Tolerance, LongWindow: a.LongWindow, QueueSize: a.QueueSize,
	}
}

// ModelConfig returns the fake service model a scenario service describes
// (scenarios.Service.Model), without the scenario's events.
func ModelConfig(svc *scenarios.Service) fakeapi.ServiceConfig {
	return fakeapi.ServiceConfig{Config: svc.Model()}
}

// ServeConfig is ModelConfig for a service served over HTTP (serve, live
// runs): it also lists, as the service's write routes, the /tools/NAME path
// of every write tool the scenario sends to it, with the tool's
// resource_from, so that a client posting to those paths (or below them)
// is counted as writing the resource the scenario says without declaring
// it.
//
// It carries the scenario's events on the service (ModelEvents), as
// ScenarioModelConfig does for virtual runs.
func ServeConfig(sc *scenarios.Scenario, svc *scenarios.Service) fakeapi.ServiceConfig {
	cfg := ScenarioModelConfig(sc, svc)
	for _, t := range sc.Tools {
		if t.Service == svc.Name && t.Kind == scenarios.KindWrite {
			cfg.WriteRoutes = append(cfg.WriteRoutes, fakeapi.WriteRoute{Path: "/tools/" + t.Name, ResourceFrom: t.ResourceFrom})
		}
	}
	// The agent loop the fake model drives on the service the workload's
	// model calls go to.
	cfg.Agent = AgentConfig(sc, svc.Name)
	return cfg
}

// ScenarioModelConfig is ModelConfig with the scenario's timed events on
// the service (ModelEvents): the model a virtual run drives.
func ScenarioModelConfig(sc *scenarios.Scenario, svc *scenarios.Service) fakeapi.ServiceConfig {
	cfg := ModelConfig(svc)
	cfg.Events = ModelEvents(sc, svc)
	return cfg
}

// schedPriorities returns the sched form of a strategy's priority table.
func schedPriorities(st *scenarios.Strategy) []sched.PriorityClass {
	var out []sched.PriorityClass
	for _, p := range st.Priority {
		out = append(out, sched.PriorityClass{Name: p.Class, Share: p.Share})
	}
	return out
}
