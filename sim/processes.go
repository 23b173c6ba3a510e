package sim

import (
	"time"

	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
)

// proc is one agent process of a run: a scheduler of its own with its own
// attempts in flight and wake-ups, the turns it runs, and, under the
// shared quota, its leases on the shared buckets. Every process sends to
// the same service models, so to the same limits.
type proc struct {
	core    *sched.Core
	wakeSeq uint64
	quota   *procQuota // QuotaShared only
	stats   procStats  // multi-process runs only
}

// procStats are one process's figures.
type procStats struct {
	turns, failedTurns, unfinished          int64
	calls, goodCalls, attempts, rateLimited int64
	okTurnLat                               *collect.Histogram
}

func (s *procStats) result(r *sched.Result, window time.Duration) {
	if r.Finished > window {
		return // unfinished at the end, as in the strategy's figures
	}
	s.calls++
	if r.Err == nil && r.Finished <= window {
		s.goodCalls++
	}
}

func (s *procStats) turn(latency time.Duration, failed bool) {
	s.turns++
	if failed {
		s.failedTurns++
	} else {
		s.okTurnLat.Add(latency)
	}
}

// ProcessSchedConfig is SchedConfig for one of the workload's processes
// under the strategy's quota mode: under QuotaSplit every service's rates
// and capacities are divided among Workload.Processes (see splitServices);
// otherwise it is SchedConfig. The caller sets Rand and Hook. Live runs of
// several processes use it so that they pace as the simulator does.
func ProcessSchedConfig(sc *scenarios.Scenario, st *scenarios.Strategy) (sched.Config, error) {
	cfg, err := setup.SchedConfig(sc, st)
	if err != nil {
		return cfg, err
	}
	if st.Quota.Mode == scenarios.QuotaSplit {
		cfg.Services = SplitServices(cfg.Services, max(sc.Workload.Processes, 1))
	}
	return cfg, nil
}

// SplitServices returns the services' configurations with every rate and
// capacity divided among n processes: limit ÷ n, request bursts at least 1.
func SplitServices(svcs map[string]sched.ServiceConfig, n int) map[string]sched.ServiceConfig {
	out := make(map[string]sched.ServiceConfig, len(svcs))
	f := float64(n)
	for name, s := range svcs {
		if s.RequestsPerMinute > 0 {
			burst := s.RequestBurst
			if burst <= 0 {
				burst = max(1, s.RequestsPerMinute/60)
			}
			s.RequestsPerMinute /= f
			s.RequestBurst = max(1, burst/f)
		}
		if s.TokensPerMinute > 0 {
			burst := s.TokenBurst
			if burst <= 0 {
				burst = s.TokensPerMinute
			}
			s.TokensPerMinute /= f
			s.TokenBurst = burst / f
		}
		out[name] = s
	}
	return out
}
