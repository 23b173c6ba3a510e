package sim

import (
	"github.com/simbench/simbench/internal/downsample"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
)

// maxLimitPoints bounds each service's limit trace in results.json: a
// longer one is downsampled (downsample.MinMax), keeping its first and last
// step and each stretch's lowest and highest limit.
const maxLimitPoints = 2000

// limitRecorder collects one strategy's adaptive limits as they step, per
// service, for StrategyResult.LimitTrace. It is fed from the scheduler's
// Hook, so it is used from one goroutine at a time (the engine's, or the
// Runner's in a live run).
type limitRecorder struct {
	services []string // the services with an adaptive limit, in scenario order
	steps    map[string][]LimitPoint
}

// newLimitRecorder returns a recorder for the services cfg gives an
// adaptive limit, or nil when it gives none (then nothing is recorded and
// the scheduler needs no hook for it).
func newLimitRecorder(sc *scenarios.Scenario, cfg *sched.Config) *limitRecorder {
	var r *limitRecorder
	for _, svc := range sc.Services {
		if cfg.Services[svc.Name].Adaptive == nil {
			continue
		}
		if r == nil {
			r = &limitRecorder{steps: map[string][]LimitPoint{}}
		}
		r.services = append(r.services, svc.Name)
	}
	return r
}

// begin records each service's starting limit at time 0, as the core
// holds it before any completion has moved it.
func (r *limitRecorder) begin(core *sched.Core) {
	for _, name := range r.services {
		r.steps[name] = append(r.steps[name], LimitPoint{T: 0, Limit: core.Limit(name)})
	}
}

// add records that the limit of service stepped to n at t seconds.
func (r *limitRecorder) add(service string, t float64, n int) {
	r.steps[service] = append(r.steps[service], LimitPoint{T: t, Limit: n})
}

// see is a sched.Config.Hook for virtual runs: it records every
// EventLimit at the event's (virtual) time and ignores the rest.
func (r *limitRecorder) see(ev sched.Event) {
	if ev.Kind == sched.EventLimit {
		r.add(ev.Service, ev.At.Seconds(), ev.N)
	}
}

// trace returns the recorded steps for StrategyResult.LimitTrace, each
// service's at most maxLimitPoints long; nil for a nil recorder.
func (r *limitRecorder) trace() map[string][]LimitPoint {
	if r == nil {
		return nil
	}
	out := make(map[string][]LimitPoint, len(r.steps))
	for name, pts := range r.steps {
		out[name] = downsample.MinMax(pts, maxLimitPoints, func(p *LimitPoint) float64 { return float64(p.Limit) })
	}
	return out
}

// chainHooks returns a hook that calls each non-nil hook in order, or nil
// when there is none, so a run that wants no events costs the core nothing.
func chainHooks(hooks ...func(sched.Event)) func(sched.Event) {
	var hs []func(sched.Event)
	for _, h := range hooks {
		if h != nil {
			hs = append(hs, h)
		}
	}
	switch len(hs) {
	case 0:
		return nil
	case 1:
		return hs[0]
	}
	return func(ev sched.Event) {
		for _, h := range hs {
			h(ev)
		}
	}
}
