package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/internal/atomicfile"
	"github.com/simbench/simbench/pipeline"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// PlanFile is the name of the file `sweep --plan` writes.
const PlanFile = "plan.json"

// planFormat names the format of plan.json, version 1.
const planFormat = "simbench-sweep-plan/1"

// sweepPlan is plan.json: the runs a sharded sweep needs next.
type sweepPlan struct {
	Format string       `json:"format"`
	Points []sim.RunKey `json:"points"`
}

// sharded does --plan, --shard or --merge. The folders of the shards are
// a run cache each (sim.Cache); the sweep runs over their read-only union
// (sim.OpenUnion), which holds the runs or names those it lacks. The sweep
// is adaptive, so what it needs next is known only from what it measured:
// each plan is the runs of its next step.
//
// An interrupt (the context's cancellation) exits exitInterrupted, as in
// every command; the runs a shard finished before it are kept in dir.
func (c *SweepCmd) sharded(out io.Writer, sc *scenarios.Scenario, dir string, o decision.SweepOptions) (err error) {
	if n := btoi(c.Plan) + btoi(c.Shard.N > 0) + btoi(c.Merge); n > 1 {
		return codedError{errors.New("--plan, --shard and --merge: give one"), exitInvalid}
	}
	if c.Merge && len(c.Dirs) == 0 {
		return codedError{errors.New("--merge: name the shards' folders to merge"), exitInvalid}
	}
	v, err := cacheVersion()
	if err != nil {
		return fmt.Errorf("this build names no version and its executable cannot be read: %w", err)
	}
	ctx, stop := interruptible(c.parent)
	defer stop()
	dirs, again := c.Dirs, fmt.Sprintf("run `simbench sweep %s --plan` and the shards until the plan is empty", c.Scenario)
	if url, ok := workURL(c.Dirs); ok {
		switch {
		case !c.Merge:
			return codedError{fmt.Errorf("%s: a sweep in Redis is merged with --merge or worked on with --work, not given to --plan or --shard", url), exitInvalid}
		case len(c.Dirs) > 1:
			return codedError{fmt.Errorf("--merge %s: give the Redis URL alone, without folders", url), exitInvalid}
		}
		mirror, err := mirrorSweep(ctx, url, sc, o, v)
		if mirror != "" {
			defer os.RemoveAll(mirror)
		}
		if err != nil {
			return err
		}
		dirs, again = []string{mirror}, fmt.Sprintf("run `simbench sweep %s --work %s` workers until the plan is empty", c.Scenario, url)
	}
	ran, mine := 0, 0 // the runs of this shard finished, and its share
	defer func() {
		switch {
		case !errors.Is(err, context.Canceled):
		case c.Shard.N > 0:
			err = codedError{fmt.Errorf("interrupted: %d of shard %d/%d's %d runs finished, kept in %s", ran, c.Shard.I, c.Shard.N, mine, dir), exitInterrupted}
		default:
			err = codedError{errors.New("interrupted: nothing written"), exitInterrupted}
		}
	}()
	sw, missing, err := sweepOver(ctx, sc, o, dirs, v)
	switch {
	case err != nil:
		return err
	case c.Merge && len(missing) > 0:
		return fmt.Errorf("the runs given do not hold the whole sweep: %w; %s", &sim.MissError{Keys: keysOf(missing)}, again)
	case c.Merge:
		return pipeline.WriteSweep(sc.Name, sw, c.pipelineOptions(out, dir, o))
	case c.Plan:
		p := sweepPlan{Format: planFormat, Points: keysOf(missing)}
		data, err := results.Encode(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, PlanFile), data, 0o644); err != nil {
			return err
		}
		fmt.Fprintln(out, len(missing))
		return nil
	}
	// The folder is made even when the slice is empty: the next plan and
	// the merge are given every shard's folder.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	into := sim.NewCache(dir, v, func(msg string) { fmt.Fprintf(os.Stderr, "simbench: warning: %s\n", msg) })
	for i := range missing {
		if i%c.Shard.N == c.Shard.I {
			mine++
		}
	}
	for i, p := range missing {
		if i%c.Shard.N != c.Shard.I {
			continue
		}
		if err := p.Run(ctx, into); err != nil {
			return err
		}
		ran++
	}
	fmt.Fprintf(out, "shard %d/%d: %d of the %d runs needed next simulated into %s\n", c.Shard.I, c.Shard.N, ran, len(missing), dir)
	return nil
}

// sweepOver runs the sweep o of sc over the read-only union of the run
// folders dirs (sim.OpenUnion) for cache version v, and returns it with
// the runs its next step needs that the folders do not hold (none: the
// sweep is complete). A folder holding what is not a run of this version
// is invalid input.
func sweepOver(ctx context.Context, sc *scenarios.Scenario, o decision.SweepOptions, dirs []string, v string) (*results.Sweep, []sim.Point, error) {
	union, err := sim.OpenUnion(dirs, v)
	if err != nil {
		return nil, nil, codedError{err, exitInvalid}
	}
	o.Cache, o.Progress = union, nil
	sw, err := decision.Sweep(ctx, sc, o)
	var miss *sim.MissError
	switch {
	case err == nil || errors.As(err, &miss):
		return sw, union.Missing(), nil
	case errors.As(err, new(decision.InputError)):
		return nil, nil, codedError{err, exitInvalid}
	}
	return nil, nil, err
}

// keysOf returns the points' keys.
func keysOf(points []sim.Point) []sim.RunKey {
	out := make([]sim.RunKey, len(points))
	for i, p := range points {
		out[i] = p.Key
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
