package decision

import (
	"context"
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
func runTrials(ctx context.Context, sc *scenarios.Scenario, ts []*trial, from, to int, name string, follow bool, o Options, opts sim.Options) error {
	if len(ts) == 0 || from >= to {
		return nil
	}
	run := *sc
	run.Strategies = nil
	for _, t := range ts {
		run.Strategies = append(run.Strategies, t.st)
	}
	seed := o.seeds[from]
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

// intervalCoversSeeds reports whether, over n seeds, the p95's 95%
// interval (results.IntervalOf) always holds every seed's value: a value
// lies at most sd·(n−1)/√n from the mean, and the interval reaches
// t·sd/√n either side, so it holds them when Student's t quantile (n−1
// degrees of freedom) is at least n−1. True for n = 2, 3, 4 (t = 12.71,
// 4.30, 3.18), false from 5 (t = 2.78 < 4).
func intervalCoversSeeds(n int) bool { return n >= 2 && n <= 4 }

// cannotBeFaster reports whether a pace whose seeds run so far are pts,
// of n in all, can no longer answer faster than own (Rule.faster) however
// its other seeds come out, so that choosePace would not take it. Some
// seed's p95 x at or above own's interval's low end and at or above
// own's p95 ÷ (1 + tolerance) proves it: over all n seeds, either the
// mean is no faster beyond the tolerance, or it is below own's p95, and
// then the pace's interval (which holds x, intervalCoversSeeds) overlaps
// own's. Over that one seed alone it is no faster beyond the tolerance
// either.
func (r Rule) cannotBeFaster(pts []results.SweepPoint, n int, own *results.SweepPoint) bool {
	if own == nil || own.Seeds < 2 || !intervalCoversSeeds(n) {
		return false
	}
	for _, p := range pts {
		x := float64(p.P95Ms)
		if x >= float64(own.P95LoMs) && !(x*(1+r.tolerance()) < float64(own.P95Ms)) {
			return true
		}
	}
	return false
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
