package sim

import (
	"time"

	"fmt"
	"math"
	"slices"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/satmath"
)

// SchedConfig returns the scheduler configuration a strategy describes for
// the scenario's services. The caller sets Rand and Hook.
func SchedConfig(sc *scenarios.Scenario, st *scenarios.Strategy) (sched.Config, error) {
	backoff, err := sched.ParseBackoff(string(st.Retry.Backoff))
	if err != nil && st.Retry.Backoff != "" {
		return sched.Config{}, fmt.Errorf("strategy %q: %w", st.Name, err)
	}
	cfg := sched.Config{
		MaxInFlight: st.MaxInFlight,
		Services:    make(map[string]sched.ServiceConfig, len(sc.Services)),
		MaxQueued:   st.MaxQueued,
		FanOut:      st.FanOut,
		Retry: sched.RetryPolicy{
			Backoff:          backoff,
			Base:             st.Retry.Base,
			Cap:              st.Retry.Cap,
			MaxAttempts:      st.Retry.Attempts,
			Budget:           st.Retry.Budget,
			IgnoreRetryAfter: !st.Retry.HonorRetryAfter,
			RetryAfterJitter: st.Retry.RetryAfterJitter,
		},
		KeepSlotDuringBackoff: st.KeepSlotDuringBackoff,
		MaxRetryAfter:         st.Retry.MaxRetryAfter,
		AttemptTimeout:        st.AttemptTimeout,
		CallTimeout:           st.CallTimeout,
		TurnTimeout:           st.TurnTimeout,
		TurnTokenBudget:       st.TokenBudget,
		TurnAttemptBudget:     st.AttemptBudget,
	}
	if st.FanOutMode == scenarios.FanOutTruncate {
		cfg.FanOutMode = sched.FanOutTruncate
	}
	if st.Join == scenarios.JoinAllOrNothing {
		cfg.Join = sched.JoinAllOrNothing
	}
	if st.Retry.OverMaxRetryAfter == scenarios.OverMaxFail {
		cfg.OverMaxRetryAfter = sched.RetryAfterFail
	}
	for _, svc := range sc.Services {
		s := sched.ServiceConfig{
			MaxInFlight:       st.MaxInFlightPerService[svc.Name],
			PauseOnRetryAfter: st.PauseOnRetryAfter,
		}
		if st.TokenBucket {
			s.RequestsPerMinute = requestsPerMinute(&svc)
			s.RequestBurst = requestBurst(&svc)
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
	alg := sched.AlgorithmAIMD
	if a.Algorithm == scenarios.AdaptiveGradient {
		alg = sched.AlgorithmGradient
	}
	return &sched.AdaptiveConfig{
		Algorithm: alg, Initial: a.Initial, Min: a.Min, Max: a.Max, Backoff: a.Decrease,
		Smoothing: a.Smoothing, Tolerance: a.Tolerance, LongWindow: a.LongWindow, QueueSize: a.QueueSize,
	}
}

// requestsPerMinute is the tighter of a service's request limits, per minute.
func requestsPerMinute(svc *scenarios.Service) float64 {
	switch {
	case svc.RequestsPerSecond > 0 && svc.RequestsPerMinute > 0:
		return math.Min(svc.RequestsPerSecond*60, svc.RequestsPerMinute)
	case svc.RequestsPerSecond > 0:
		return svc.RequestsPerSecond * 60
	default:
		return svc.RequestsPerMinute
	}
}

// requestBurst is the request bucket's capacity: the service's burst, or one
// second's worth of its tightest request rate, at least 1 — the same rule for
// the fake service and for the client's own buckets.
func requestBurst(svc *scenarios.Service) float64 {
	if svc.Burst > 0 {
		return svc.Burst
	}
	return math.Max(1, requestsPerMinute(svc)/60)
}

// ModelConfig returns the fake service model a scenario service describes.
// Rates too large for an int64 saturate, so the model's validation reports
// them as too large rather than as negative.
func ModelConfig(svc *scenarios.Service) fakeapi.ServiceConfig {
	return modelConfig(svc)
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
	cfg := modelConfig(svc)
	cfg.Events = ModelEvents(sc, svc)
	return cfg
}

func modelConfig(svc *scenarios.Service) fakeapi.ServiceConfig {
	cfg := fakeapi.ServiceConfig{
		Name:          svc.Name,
		RPS:           satmath.FromFloat[int64](svc.RequestsPerSecond),
		RPM:           satmath.FromFloat[int64](math.Ceil(svc.RequestsPerMinute)),
		TPM:           satmath.FromFloat[int64](math.Ceil(svc.TokensPerMinute)),
		MaxConcurrent: svc.MaxConcurrent,
		Algorithm:     fakeapi.Algorithm(svc.Limiter),
		CountRejected: svc.CountRejected,
		Latency:       latencyConfig(svc),
		Faults: fakeapi.FaultConfig{
			ErrorRate:         svc.Faults.ErrorRate,
			HangRate:          svc.Faults.HangRate,
			ResetRate:         svc.Faults.ResetRate,
			SlowFirstByteRate: svc.Faults.SlowFirstByte.Rate,
			SlowFirstByte:     svc.Faults.SlowFirstByte.Delay,
			Overload: fakeapi.OverloadConfig{
				Every:  svc.Faults.Overload.Every,
				Length: svc.Faults.Overload.Length,
				Rate:   svc.Faults.Overload.Rate,
			},
			ConflictRate: svc.Faults.Conflict,
		},
		Headers:    fakeapi.HeaderStyle(svc.Headers),
		Lie:        fakeapi.LieMode(svc.Lying),
		Background: fakeapi.BackgroundConfig{Rate: svc.Background.Rate, Tokens: svc.Background.Tokens, Burst: svc.Background.Burst},
	}
	cfg.Generation = generationConfig(&svc.Generation)
	cfg.InputTPM = satmath.FromFloat[int64](math.Ceil(svc.InputTokensPerMinute))
	cfg.OutputTPM = satmath.FromFloat[int64](math.Ceil(svc.OutputTokensPerMinute))
	if r := svc.RequestsPerSecond; r != math.Trunc(r) {
		// The model counts whole requests per window: a fractional rate per
		// second becomes the equivalent (tighter) rate per minute.
		cfg.RPS = 0
		if rpm := satmath.FromFloat[int64](math.Floor(r * 60)); cfg.RPM == 0 || rpm < cfg.RPM {
			cfg.RPM = max(rpm, 1)
		}
	}
	if cfg.Algorithm == "" || cfg.Algorithm == fakeapi.TokenBucket {
		cfg.Algorithm = fakeapi.TokenBucket
		if cfg.RPS > 0 || cfg.RPM > 0 {
			cfg.Burst = satmath.FromFloat[int64](math.Ceil(requestBurst(svc)))
		}
	}
	for _, k := range svc.Keys {
		cfg.Keys = append(cfg.Keys, fakeapi.KeyConfig{Key: k})
	}
	return cfg
}

func latencyConfig(svc *scenarios.Service) fakeapi.LatencyConfig {
	c := durationDist(svc.Latency)
	c.LoadKnee, c.LoadSlope = svc.Load.Knee, svc.Load.Factor
	return c
}

// generationConfig maps a service's ttft and tokens_per_s onto the model's;
// unset keys stay unset.
func generationConfig(g *scenarios.Generation) fakeapi.GenerationConfig {
	var c fakeapi.GenerationConfig
	if g.TTFT.Kind != "" {
		c.TTFT = durationDist(g.TTFT)
	}
	if r := g.TokensPerSecond; r.Kind != "" {
		c.TokensPerSecond = fakeapi.RateConfig{
			Dist: fakeapi.Dist(r.Kind), Value: r.Value, Min: r.Min, Max: r.Max,
			Mean: r.Mean, StdDev: r.Stddev, P50: r.P50, P95: r.P95, Alpha: r.Alpha, Samples: r.Samples,
		}
		switch r.Kind {
		case scenarios.DistPareto:
			c.TokensPerSecond.Scale, c.TokensPerSecond.Max = r.Min, 0
			c.TokensPerSecond.Cap = r.Max
		case scenarios.DistNormal, scenarios.DistLognormal, scenarios.DistExponential:
			c.TokensPerSecond.Cap, c.TokensPerSecond.Max = r.Max, 0
		}
	}
	return c
}

// durationDist maps a scenario's duration distribution onto the model's.
func durationDist(l scenarios.Dist[time.Duration]) fakeapi.LatencyConfig {
	c := fakeapi.LatencyConfig{
		Dist: fakeapi.Dist(l.Kind), Value: l.Value, Min: l.Min, Max: l.Max,
		Mean: l.Mean, StdDev: l.Stddev, P50: l.P50, P95: l.P95, Alpha: l.Alpha,
		Samples: l.Samples,
	}
	switch l.Kind {
	case scenarios.DistPareto:
		c.Scale, c.Max = l.Min, 0
		c.Cap = l.Max
	case scenarios.DistNormal, scenarios.DistLognormal, scenarios.DistExponential:
		c.Cap, c.Max = l.Max, 0
	case "":
		c.Dist = fakeapi.DistConstant
	}
	return c
}
