package collect

import (
	"github.com/simbench/simbench/internal/downsample"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
)

// MaxLimitPoints bounds each service's limit trace in results.json: a
// longer one is downsampled (downsample.MinMax), keeping its first and last
// step and each stretch's lowest and highest limit.
const MaxLimitPoints = 2000

// LimitChunk is how many steps of one service a recorder holds before it
// reduces them: what bounds its memory (about 3 × limitChunk points per
// service, 16 bytes each) however long the run. The points it keeps are
// never fewer than limitChunk/2, four times what results.json keeps.
const LimitChunk = 8 * MaxLimitPoints

// LimitRecorder collects one strategy's adaptive limits as they step, per
// service, for StrategyResult.LimitTrace. It is fed from the scheduler's
// Hook, so it is used from one goroutine at a time (the engine's, or the
// Runner's in a live run).
type LimitRecorder struct {
	Services []string                // the services with an adaptive limit, in scenario order
	Series   map[string]*LimitSeries // each service's steps, by service name
}

// LimitSeries is one service's steps in bounded memory. New steps go to
// raw; a full raw chunk is reduced by factor (downsample.MinMax) onto kept;
// when kept outgrows limitChunk it is halved the same way and factor
// doubles. Every stretch of the run is then kept at the same density, the
// extremes of each stretch included.
type LimitSeries struct {
	// Kept holds the reduced steps, in time order; Raw the steps recorded
	// since the last reduction, at most LimitChunk, not yet reduced.
	Kept, Raw []results.LimitPoint
	// Factor is how many raw steps one kept point stands for (1, 2, 4...).
	Factor int
}

// NewLimitRecorder returns a recorder for the services cfg gives an
// adaptive limit, or nil when it gives none (then nothing is recorded and
// the scheduler needs no hook for it).
func NewLimitRecorder(sc *scenarios.Scenario, cfg *sched.Config) *LimitRecorder {
	var r *LimitRecorder
	for _, svc := range sc.Services {
		if cfg.Services[svc.Name].Adaptive == nil {
			continue
		}
		if r == nil {
			r = &LimitRecorder{Series: map[string]*LimitSeries{}}
		}
		r.Services = append(r.Services, svc.Name)
		r.Series[svc.Name] = &LimitSeries{Factor: 1}
	}
	return r
}

// Begin records each service's starting limit at time 0, as the core
// holds it before any completion has moved it.
func (r *LimitRecorder) Begin(core *sched.Core) {
	for _, name := range r.Services {
		r.Add(name, 0, core.Limit(name))
	}
}

// Add records that the limit of service stepped to n at t seconds.
func (r *LimitRecorder) Add(service string, t float64, n int) {
	s := r.Series[service]
	if s == nil { // a service the configuration gave no adaptive limit
		s = &LimitSeries{Factor: 1}
		r.Series[service] = s
	}
	s.Raw = append(s.Raw, results.LimitPoint{T: t, Limit: n})
	if len(s.Raw) == LimitChunk {
		s.flush()
	}
}

// See is a sched.Config.Hook for virtual runs: it records every
// EventLimit at the event's (virtual) time and ignores the rest.
func (r *LimitRecorder) See(ev sched.Event) {
	if ev.Kind == sched.EventLimit {
		r.Add(ev.Service, ev.At.Seconds(), ev.N)
	}
}

// byLimit is the value downsampling keeps the extremes of.
func byLimit(p *results.LimitPoint) float64 { return float64(p.Limit) }

// flush reduces the raw steps onto kept, and halves kept when it has
// outgrown limitChunk.
func (s *LimitSeries) flush() {
	if len(s.Raw) == 0 {
		return
	}
	s.Kept = append(s.Kept, downsample.MinMax(s.Raw, max(4, len(s.Raw)/s.Factor), byLimit)...)
	s.Raw = s.Raw[:0]
	if len(s.Kept) > LimitChunk {
		s.Kept = downsample.MinMax(s.Kept, LimitChunk/2, byLimit)
		s.Factor *= 2
	}
}

// Points returns the steps kept so far, in time order.
func (s *LimitSeries) Points() []results.LimitPoint {
	return append(append([]results.LimitPoint(nil), s.Kept...), s.Raw...)
}

// Last returns the latest step recorded.
func (s *LimitSeries) Last() results.LimitPoint {
	if n := len(s.Raw); n > 0 {
		return s.Raw[n-1]
	}
	return s.Kept[len(s.Kept)-1]
}

// Trace returns the recorded steps for StrategyResult.LimitTrace, each
// service's at most maxLimitPoints long; nil for a nil recorder.
func (r *LimitRecorder) Trace() map[string][]results.LimitPoint {
	if r == nil {
		return nil
	}
	out := make(map[string][]results.LimitPoint, len(r.Series))
	for name, s := range r.Series {
		s.flush()
		out[name] = downsample.MinMax(s.Kept, MaxLimitPoints, byLimit)
	}
	return out
}

// ChainHooks returns a hook that calls each non-nil hook in order, or nil
// when there is none, so a run that wants no events costs the core nothing.
func ChainHooks(hooks ...func(sched.Event)) func(sched.Event) {
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
