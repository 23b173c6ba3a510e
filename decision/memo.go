package decision

// The memo of runs: a decision simulates no configuration twice. Its
// search can reach one configuration by several paths (a strategy swept
// again at a pace it was swept at before, when no tuning's choice is shown
// no worse than every configuration measured), and each seed of it runs
// the same every time; the memo keeps every run the search simulated, by
// what the simulator does with it (simKey), and hands a run it holds to
// the next trial that asks for it instead of simulating it again.

import (
	"encoding/json"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// runMemo holds the runs a decision simulated, by runKey. A nil runMemo
// holds nothing and keeps nothing.
type runMemo map[runKey]results.StrategyResult

// runKey names one run as the simulator sees it: the scenario's
// conditions (sim.ScenarioDigest: workload, services, tools, events), the
// strategy's settings as the simulator reads them (simKey), the seed and
// the duration, in nanoseconds. Two runs with one key are the same run,
// bit for bit (the engine is deterministic), as two runs with one
// sim.RunKey are for the run cache.
type runKey struct {
	scenario, strategy string
	seed               uint64
	duration           int64
}

// simKey returns strategy st's settings as the simulator reads them, as
// JSON: st but for what no run reads. The description and the recommend
// mark are for reports and the choice of strategy; the headroom and header
// sync only shape the token buckets, so without one they read nothing
// (setup.SchedConfig, the result's Headroom and collect.StrategyHeadroom
// all read them under TokenBucket); and the name only names the result
// and seeds the strategy's random stream, from which the scheduler draws
// only a jittered backoff or a jitter on Retry-After (sched's Core.retry),
// so a strategy with neither never draws from it.
func simKey(st scenarios.Strategy) string {
	st.Description, st.Recommend = "", false
	if !st.TokenBucket {
		st.Headroom, st.HeaderSync = 0, false
	}
	if !drawsRandom(st) {
		st.Name = ""
	}
	b, err := json.Marshal(st)
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return string(b)
}

// drawsRandom reports whether a run of st may draw from the strategy's
// random stream: its backoff is jittered or it jitters Retry-After.
func drawsRandom(st scenarios.Strategy) bool {
	return st.Retry.Backoff.Jittered() || st.Retry.RetryAfterJitter > 0
}

// memoKeys returns the key of each seed's run of strategy st of sc, from
// the from-th seed to the to-th (excluded), the seeds following the first
// (sim.Seeds).
func (o Options) memoKeys(sc *scenarios.Scenario, st scenarios.Strategy, from, to int) []runKey {
	scenario, strategy := sim.ScenarioDigest(sc), simKey(st)
	keys := make([]runKey, 0, to-from)
	for i := from; i < to; i++ {
		keys = append(keys, runKey{scenario: scenario, strategy: strategy, seed: o.seeds[0] + uint64(i), duration: int64(o.each)})
	}
	return keys
}

// held returns the runs the memo holds under keys, in their order, up to
// the first key it does not hold, each named as strategy st.
func (m runMemo) held(keys []runKey, st scenarios.Strategy) []results.StrategyResult {
	var out []results.StrategyResult
	for _, k := range keys {
		r, ok := m[k]
		if !ok {
			break
		}
		r.Name = st.Name
		out = append(out, r)
	}
	return out
}

// keep puts a finished run (neither partial nor stopped early) in the memo
// under key k.
func (m runMemo) keep(k runKey, r results.StrategyResult) {
	if m == nil || r.Partial || r.StoppedAtS > 0 {
		return
	}
	m[k] = r
}

// keepRuns keeps in the memo the runs of r, a strategy of sc run to its
// end (no stop asked for) over the first seeds: one run, or each of its
// SeedRuns.
func (o Options) keepRuns(sc *scenarios.Scenario, r results.StrategyResult) {
	st := sc.Strategy(r.Name)
	if o.runs == nil || st == nil {
		return
	}
	runs := r.SeedRuns
	if len(runs) == 0 {
		runs = []results.StrategyResult{r}
	}
	for i, k := range o.memoKeys(sc, *st, 0, len(runs)) {
		o.runs.keep(k, runs[i])
	}
}
