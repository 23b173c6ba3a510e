package decision

import (
	"context"
	"time"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// SweepOptions are the settings of Sweep.
type SweepOptions struct {
	// Strategy names the strategy whose cap is varied ("": the one
	// sim.SweepStrategy picks).
	Strategy string
	// Caps are the caps to run; nil sweeps Decide's own range, and the
	// sweep then carries the decision.
	Caps []int
	// Loads cross the caps with workload sizes (nil: the workload as
	// written).
	Loads []sim.Load
	// Rule chooses each row's cap.
	Rule Rule
	// Seeds (at least 1), Seed (nil: the scenario's) and Duration (0: the
	// scenario's) shape each simulated run.
	Seeds    int
	Seed     *uint64
	Duration time.Duration
	// Cache and Parallel are Options' (Decide's) Cache and Parallel.
	Cache    *sim.Cache
	Parallel int
	// NoEarlyStop is Options' (Decide's) NoEarlyStop.
	NoEarlyStop bool
	// Progress, when set, is called before the runs over Caps × Loads
	// start (not for Decide's own sweep) with their number and the virtual
	// duration of each, and returns what reports their progress
	// (sim.Options.Progress) and what ends the report once they are done
	// (aborted: they failed).
	Progress func(runs int, each time.Duration) (update func(strategy string, done, total time.Duration), finish func(aborted bool))
}

// Sweep runs one strategy of the scenario over a range of caps and seeds,
// under each load, and returns sweep.json's content: a row per load with
// its chosen cap and knee. With no caps given it sweeps the decision's own
// range (Decide) and carries the decision; loads given then rerun those
// caps under each load. When ctx ends first, Sweep returns, with
// ctx.Err(), the points measured with Partial set (nil when none was).
func Sweep(ctx context.Context, sc *scenarios.Scenario, o SweepOptions) (*results.Sweep, error) {
	strategy := o.Strategy
	if strategy == "" {
		strategy = sim.SweepStrategy(sc)
	}
	if sc.Strategy(strategy) == nil {
		_, err := (&sim.Options{Strategies: []string{strategy}}).Apply(sc)
		return nil, InputError{err}
	}
	if o.Rule.Objective == "" {
		o.Rule.Objective = sc.Objective
	}
	sw := &results.Sweep{Scenario: sc.Name, Strategy: strategy, MaxShare: o.Rule.MaxShare, Chosen: map[string]int{}, Knee: map[string]int{}}
	opts := sim.Options{Duration: o.Duration, Seed: o.Seed, Seeds: o.Seeds, Cache: o.Cache, Parallel: o.Parallel}
	applied, err := opts.Apply(sc)
	if err != nil {
		return nil, InputError{err}
	}
	caps := o.Caps
	if caps == nil {
		d, err := Decide(ctx, sc, Options{Strategy: o.Strategy, Rule: o.Rule, Seeds: o.Seeds, Seed: o.Seed, Duration: o.Duration, Cache: o.Cache, Parallel: o.Parallel, NoEarlyStop: o.NoEarlyStop})
		if err != nil {
			if d == nil {
				return nil, err
			}
			sw.Partial, sw.Rows = true, []results.SweepRow{d.Row}
			return finishSweep(sw, applied.Seed, o.Seeds), err
		}
		sw.Decision, sw.Strategy = d.Decision, d.Decision.Strategy
		sw.Rows = append(sw.Rows, d.Row)
		caps = d.Decision.Evidence.Caps
	}
	if len(o.Loads) > 0 || sw.Decision == nil {
		var finish func(bool)
		if o.Progress != nil {
			opts.Progress, finish = o.Progress(len(caps)*max(1, len(o.Loads))*o.Seeds, applied.Duration)
		}
		rows, err := sim.Sweep(ctx, sc, strategy, caps, o.Loads, opts)
		if finish != nil {
			finish(err != nil)
		}
		if err != nil && (ctx.Err() == nil || len(rows) == 0) {
			return nil, err
		}
		sw.Rows = nil
		for _, row := range rows {
			var points []results.SweepPoint
			for i, s := range row.Results {
				points = append(points, SweepPointOf(row.Caps[i], s))
			}
			sw.Rows = append(sw.Rows, NewSweepRow(row.Load.String(), points, o.Rule))
		}
		if err != nil {
			// Interrupted: the rows measured, and no decision on them.
			sw.Partial, sw.Decision = true, nil
			return finishSweep(sw, applied.Seed, o.Seeds), err
		}
	}
	return finishSweep(sw, applied.Seed, o.Seeds), nil
}

// ReadSweep reads a sweep file (results.ReadSweep): the object `simbench
// sweep` writes, or a bare array of points, taken as one load whose knee
// and chosen cap are found with maxShare, which also stands in for a file
// that records no share.
func ReadSweep(path string, maxShare float64) (*results.Sweep, error) {
	sw, err := results.ReadSweep(path)
	if err != nil {
		return nil, err
	}
	if sw.PointsOnly {
		sw.Rows = []results.SweepRow{NewSweepRow("", sw.Rows[0].Points, Rule{MaxShare: maxShare})}
	}
	if sw.MaxShare == 0 {
		sw.MaxShare = maxShare
	}
	return sw, nil
}

// finishSweep fills in sw's seeds, from the first seed on, and each row's
// chosen cap and knee by load, and returns sw.
func finishSweep(sw *results.Sweep, first uint64, seeds int) *results.Sweep {
	sw.Seeds = sim.Seeds(first, seeds)
	for _, row := range sw.Rows {
		if row.Chosen > 0 {
			sw.Chosen[row.Load] = row.Chosen
		}
		if row.Knee > 0 {
			sw.Knee[row.Load] = row.Knee
		}
	}
	return sw
}
