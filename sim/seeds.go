package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// Seeds returns the n seeds a run with Options.Seeds = n uses: the base
// seed and the n−1 that follow it (base, base+1, …). At least one.
func Seeds(base uint64, n int) []uint64 {
	out := []uint64{base}
	for i := 1; i < n; i++ {
		out = append(out, base+uint64(i))
	}
	return out
}

// RunSeeds runs the scenario once per seed of Seeds(seed, opts.Seeds), each
// run as Run does, and returns the first seed's results with
// Results.Seeds listing the seeds, every strategy's SeedRuns holding each
// seed's figures in that order (its plot series left out) and its
// SeedStats their means and 95% intervals. With one
// seed it is Run. Progress reports each strategy's time over all the seeds
// as a share of one run's duration. When ctx ends first, RunSeeds returns
// what the completed seeds measured with Partial set, and ctx.Err().
func RunSeeds(ctx context.Context, sc *scenarios.Scenario, opts Options) (*results.Results, error) {
	if opts.Seeds <= 1 {
		return Run(ctx, sc, opts)
	}
	applied, err := opts.Apply(sc)
	if err != nil {
		return nil, err
	}
	seeds := Seeds(applied.Seed, opts.Seeds)
	var first *results.Results
	var misses []RunKey
	for i, seed := range seeds {
		o := opts
		o.Seed = &seed
		if opts.Progress != nil {
			n := time.Duration(len(seeds))
			o.Progress = func(strategy string, done, total time.Duration) {
				opts.Progress(strategy, (time.Duration(i)*total+done)/n, total)
			}
		}
		r, err := Run(ctx, sc, o)
		if miss := (*MissError)(nil); errors.As(err, &miss) {
			// A read-only cache: name the runs of every seed missing.
			misses = append(misses, miss.Keys...)
			continue
		}
		if r == nil {
			return first, err
		}
		if first == nil {
			first = r
			first.Seeds = []uint64{}
		}
		if r.Partial && i > 0 {
			first.Partial = true
			return seedStats(first), err
		}
		first.Seeds = append(first.Seeds, seed)
		for j := range first.Strategies {
			s := r.Strategies[j]
			s.LatencyCDF, s.AnswerCDF, s.Timeline, s.ServiceTimelines, s.LimitTrace, s.SeedRuns = nil, nil, nil, nil, nil, nil
			first.Strategies[j].SeedRuns = append(first.Strategies[j].SeedRuns, s)
		}
		if err != nil {
			return seedStats(first), err
		}
	}
	if len(misses) > 0 {
		return nil, &MissError{Keys: misses}
	}
	return seedStats(first), nil
}

// seedStats fills every strategy's SeedStats from its SeedRuns and returns r.
func seedStats(r *results.Results) *results.Results {
	for i := range r.Strategies {
		r.Strategies[i].SeedStats = results.SeedStatsOf(&r.Strategies[i])
	}
	return r
}

// ScenarioDigest returns the SHA-256, in hex, of the scenario's workload,
// services and tools: what a run measures under, leaving out the seed, the
// duration and the strategies, which runs vary on purpose.
func ScenarioDigest(sc *scenarios.Scenario) string {
	w := sc.Workload
	if w.Processes <= 1 {
		// One process, as before the keys existed: the same digest.
		w.Processes, w.ProcessShares = 0, nil
	}
	v := any(struct {
		W scenarios.Workload
		S []scenarios.Service
		T []scenarios.Tool
	}{w, sc.Services, sc.Tools})
	if len(sc.Events) > 0 {
		// Events are conditions too; a scenario without any keeps the
		// digest it had before events existed.
		v = struct {
			W scenarios.Workload
			S []scenarios.Service
			T []scenarios.Tool
			E []scenarios.Event
		}{w, sc.Services, sc.Tools, sc.Events}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
