package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/internal/sweepwork"
	"github.com/simbench/simbench/pipeline"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// work is `sweep --work URL`: a worker of the sweep held in the Redis at
// URL (sweepwork.Worker). It plans from the runs stored there, claims and
// simulates the runs the sweep needs next with the other workers, and
// once the plan is empty writes the sweep to dir, as the sweep run in one
// piece writes it. Progress goes to stderr, one line a run.
func (c *SweepCmd) work(out io.Writer, sc *scenarios.Scenario, dir string, o decision.SweepOptions) (err error) {
	switch {
	case c.Plan || c.Shard.N > 0 || c.Merge || len(c.Dirs) > 0:
		return codedError{errors.New("--work is a worker on its own: drop --plan, --shard, --merge and the folders"), exitInvalid}
	case c.Lease < 0:
		return codedError{fmt.Errorf("--lease %v: want a positive duration", c.Lease), exitInvalid}
	case c.Lease > 0 && c.Lease < sweepwork.MinLease:
		return codedError{fmt.Errorf("--lease %v: too short to renew in time; give at least %v", c.Lease, sweepwork.MinLease), exitInvalid}
	}
	v, err := cacheVersion()
	if err != nil {
		return fmt.Errorf("this build names no version and its executable cannot be read: %w", err)
	}
	ctx, stop := interruptible(c.parent)
	defer stop()
	store, err := openSweep(ctx, c.Work, sc, o, v)
	if err != nil {
		return err
	}
	defer store.Close()
	mirror, err := os.MkdirTemp("", "simbench-sweep-work-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(mirror)
	errOut := c.Stderr
	if errOut == nil {
		errOut = os.Stderr
	}
	owner := workerName()
	fmt.Fprintf(errOut, "simbench: worker %s on the sweep %s at %s (simbench %s)\n", owner, store.ID(), c.Work, v)
	var sw *results.Sweep // the sweep over the runs stored, at the last plan
	w := &sweepwork.Worker{Store: store, Owner: owner, Dir: mirror, Lease: c.Lease,
		Plan: func(ctx context.Context) ([]sweepwork.Task, error) {
			var missing []sim.Point
			var err error
			sw, missing, err = sweepOver(ctx, sc, o, []string{mirror}, v)
			return tasksOf(missing, mirror, v), err
		},
		Log: func(msg string) { fmt.Fprintf(errOut, "simbench: %s\n", msg) },
	}
	st, err := w.Run(ctx)
	switch {
	case errors.Is(err, context.Canceled):
		return codedError{fmt.Errorf("interrupted: the %d runs this worker simulated are stored at %s, its lease given up", st.Simulated, c.Work), exitInterrupted}
	case err != nil:
		return err
	}
	fmt.Fprintf(errOut, "simbench: the sweep is complete: %d runs stored at %s, %d of them simulated by this worker (%d plans); writing it to %s\n", st.Stored, c.Work, st.Simulated, st.Plans, dir)
	return pipeline.WriteSweep(sc.Name, sw, c.pipelineOptions(out, dir, o))
}

// tasksOf makes the worker's tasks of the runs missing: each simulates
// its run into the run folder dir (cache version v) and returns its file.
func tasksOf(missing []sim.Point, dir, v string) []sweepwork.Task {
	tasks := make([]sweepwork.Task, len(missing))
	for i, p := range missing {
		name := p.Key.File()
		tasks[i] = sweepwork.Task{Name: name, Label: fmt.Sprintf("%s at seed %d", p.Key.Strategy.Name, p.Key.Seed),
			Run: func(ctx context.Context) ([]byte, error) {
				into := sim.NewCache(dir, v, func(msg string) { fmt.Fprintf(os.Stderr, "simbench: warning: %s\n", msg) })
				if err := p.Run(ctx, into); err != nil {
					return nil, err
				}
				return os.ReadFile(filepath.Join(dir, name))
			}}
	}
	return tasks
}

// openSweep opens the store of sweep o of sc at url for cache version v:
// a URL that is not Redis's, or a sweep of another version, is invalid
// input.
func openSweep(ctx context.Context, url string, sc *scenarios.Scenario, o decision.SweepOptions, v string) (*sweepwork.Store, error) {
	if _, err := sweepwork.ParseURL(url); err != nil {
		return nil, codedError{err, exitInvalid}
	}
	store, err := sweepwork.Open(ctx, url, sweepID(sc, o), v)
	if errors.As(err, new(*sweepwork.VersionError)) {
		return nil, codedError{err, exitInvalid}
	}
	return store, err
}

// mirrorSweep copies the runs of sweep o of sc stored at url into a new
// temporary folder, returned for the caller to remove ("" when none was
// made).
func mirrorSweep(ctx context.Context, url string, sc *scenarios.Scenario, o decision.SweepOptions, v string) (string, error) {
	store, err := openSweep(ctx, url, sc, o, v)
	if err != nil {
		return "", err
	}
	defer store.Close()
	dir, err := os.MkdirTemp("", "simbench-sweep-merge-")
	if err != nil {
		return "", err
	}
	_, _, err = store.Mirror(ctx, dir)
	return dir, err
}

// sweepID names sweep o of sc in the store: the scenario's name and a
// digest of what the sweep's runs depend on (the scenario, its strategies,
// seed and duration, and the sweep's flags). Workers given the same
// scenario and flags share it. Two sweeps that met under one ID would
// still each plan their own: runs are stored by their key.
func sweepID(sc *scenarios.Scenario, o decision.SweepOptions) string {
	b, err := json.Marshal(struct {
		Digest     string
		Strategies []scenarios.Strategy
		Seed       uint64
		Duration   time.Duration
		Strategy   string
		Caps       []int
		Loads      []sim.Load
		Rule       decision.Rule
		Seeds      int
		SeedFlag   *uint64
		DurFlag    time.Duration
		NoStop     bool
	}{sim.ScenarioDigest(sc), sc.Strategies, sc.Seed, sc.Duration, o.Strategy, o.Caps, o.Loads, o.Rule, o.Seeds, o.Seed, o.Duration, o.NoEarlyStop})
	if err != nil {
		panic(err) // plain data
	}
	sum := sha256.Sum256(b)
	return sc.Name + "-" + hex.EncodeToString(sum[:6])
}

// workerName names this worker in its leases: host, process and a random
// part, so that two workers never share a name.
func workerName() string {
	host, err := os.Hostname()
	if err != nil {
		host = "host"
	}
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), rand.Text()[:6])
}

// workURL returns the first of args that is a URL (holds "://"), and
// whether there is one.
func workURL(args []string) (string, bool) {
	for _, a := range args {
		if strings.Contains(a, "://") {
			return a, true
		}
	}
	return "", false
}
