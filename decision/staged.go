package decision

import (
	"context"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
	"gonum.org/v1/gonum/stat"
)

// A search measures each configuration over its seeds in two stages: the
// first seed of every configuration of a step, then the other seeds of
// those that the first seed does not settle. A configuration settled by
// its first seed keeps that one run (its point has Seeds 1): more seeds
// could not change, or clearly would not change, what the search picks.

// trial is one configuration a search measures, seed by seed.
type trial struct {
	st   scenarios.Strategy // named as it runs: the name seeds its random stream
	cap  int
	runs []results.StrategyResult // each seed's run, in the order of the seeds
}

// point returns the trial's figures over the seeds run so far, of n in
// all: as SweepPointOf reads them from a run over the seeds run, with
// Seeds 1 when one seed of several was run.
func (t *trial) point(n int) results.SweepPoint {
	switch len(t.runs) {
	case 0:
		return results.SweepPoint{Cap: t.cap}
	case 1:
		p := SweepPointOf(t.cap, t.runs[0])
		if n > 1 {
			p.Seeds = 1
		}
		return p
	}
	return SweepPointOf(t.cap, results.StrategyResult{SeedRuns: t.runs})
}

// seedPoints returns a point for each seed the trial ran.
func (t *trial) seedPoints() []results.SweepPoint {
	out := make([]results.SweepPoint, len(t.runs))
	for i, r := range t.runs {
		out[i] = onePoint(t.cap, r)
	}
	return out
}

// runTrials runs seeds from..to-1 of the n seeds (from opts) of every trial
// of ts as one step named name, and adds each seed's run to its trial. When
// ctx ends, the runs that finished are kept and ctx's error returned.
// With follow, o.Progress follows the runs, over all the seeds: these
// seeds' share of the way.
//
// A run the memo (o.runs) holds is taken from it, not simulated again; the
// trials that still need seeds run from their first seed the memo lacks,
// and every run simulated is kept in the memo.
func runTrials(ctx context.Context, sc *scenarios.Scenario, ts []*trial, from, to int, name string, follow bool, o Options, opts sim.Options) error {
	if len(ts) == 0 || from >= to {
		return nil
	}
	if o.runs == nil || opts.StopWhen != nil {
		return simulateTrials(ctx, sc, ts, from, to, name, follow, o, opts)
	}
	need := map[int][]*trial{} // by the first seed to simulate
	keys := map[*trial][]runKey{}
	for _, t := range ts {
		keys[t] = o.memoKeys(sc, t.st, from, to)
		held := o.runs.held(keys[t], t.st)
		t.runs = append(t.runs, held...)
		if k := from + len(held); k < to {
			need[k] = append(need[k], t)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(need)) {
		had := make([]int, len(need[k]))
		for i, t := range need[k] {
			had[i] = len(t.runs)
		}
		err := simulateTrials(ctx, sc, need[k], k, to, name, follow, o, opts)
		for i, t := range need[k] {
			for j, r := range t.runs[had[i]:] { // seed k + j's run
				o.runs.keep(keys[t][k-from+j], r)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// simulateTrials simulates seeds from..to-1 of every trial of ts as
// runTrials describes, the memo aside.
func simulateTrials(ctx context.Context, sc *scenarios.Scenario, ts []*trial, from, to int, name string, follow bool, o Options, opts sim.Options) error {
	run := *sc
	run.Strategies = nil
	for _, t := range ts {
		run.Strategies = append(run.Strategies, t.st)
	}
	seed := o.seeds[0] + uint64(from) // sim.Seeds: the seeds follow the first

	po := opts
	po.Strategies, po.Seed, po.Seeds = nil, &seed, to-from
	done := o.step(name, len(ts), &po)
	if f := o.Progress; follow && f != nil {
		n, k := time.Duration(len(o.seeds)), time.Duration(to-from)
		po.Progress = chainProgress(po.Progress, func(strategy string, done, total time.Duration) {
			f(strategy, (time.Duration(from)*total+k*done)/n, total)
		})
	}
	res, err := sim.RunSeeds(ctx, &run, po)
	done(err != nil)
	if res == nil {
		return err
	}
	o.tell(&run, res, from)
	for k, t := range ts {
		r := res.Strategies[k]
		switch {
		case po.Seeds > 1:
			t.runs = append(t.runs, r.SeedRuns...)
		case !r.Partial:
			t.runs = append(t.runs, r)
		}
	}
	return err
}

// cannotQualify reports whether the seeds run (pts, one a seed) already
// make the point over all n seeds fail the rule, whatever the other seeds
// measure: a seed never answered its p95 (the mean is then Unanswered),
// or one seed's 429 share alone puts the mean over MaxShare, or its
// answered share alone puts the mean under MinAnsweredShare (every share
// is in [0, 1]).
func (r Rule) cannotQualify(pts []results.SweepPoint, n int) bool {
	const slack = 1e-9 // the mean is a sum divided by n, in floating point
	for _, p := range pts {
		if !p.P95Ms.Answered() || p.RateLimitedShare > float64(n)*r.MaxShare*(1+slack)+slack ||
			p.AnsweredShare < 1-float64(n)*(1-MinAnsweredShare)-slack {
			return true
		}
	}
	return false
}

// cannotBeFaster reports whether a pace whose seeds run so far are pts,
// of n in all, clearly will not be better than own (Rule.faster) however
// its other seeds come out, so that its other seeds are left out: some
// seed scores at least own's score × (1 + m), m being 5 times own's
// seed-to-seed spread of the score (relative standard deviation) and at
// least minMargin, as settle takes it.
func (r Rule) cannotBeFaster(pts []results.SweepPoint, own *results.SweepPoint) bool {
	if own == nil || own.Seeds < 2 {
		return false
	}
	x0 := r.Score(*own)
	m := max(minMargin, 5*relSpread(r.seedScores(*own)))
	for _, p := range pts {
		if r.Score(p) >= x0*(1+m) {
			return true
		}
	}
	return false
}

// relSpread is the relative standard deviation of xs (0 for fewer than
// two finite values).
func relSpread(xs []float64) float64 {
	xs = slices.DeleteFunc(slices.Clone(xs), func(x float64) bool { return math.IsInf(x, 0) })
	if len(xs) < 2 {
		return 0
	}
	if mean, sd := stat.MeanStdDev(xs, nil); mean > 0 {
		return sd / mean
	}
	return 0
}

// seedSpread is the largest relative standard deviation of the p95 over
// seeds among the trials run over all n seeds (0 when none was).
func seedSpread(ts []*trial, n int) float64 {
	spread := 0.0
	for _, t := range ts {
		if len(t.runs) < n || n < 2 {
			continue
		}
		var xs []float64
		for _, p := range t.seedPoints() {
			if p.P95Ms.Answered() {
				xs = append(xs, float64(p.P95Ms))
			}
		}
		if len(xs) < 2 {
			continue
		}
		if mean, sd := stat.MeanStdDev(xs, nil); mean > 0 {
			spread = max(spread, sd/mean)
		}
	}
	return spread
}
