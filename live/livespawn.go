package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched/quota"
)

// WorkerCommand makes the command that runs one fleet member as an OS
// process of its own: `simbench worker SCENARIO` followed by args (the
// member's flags: --member I/N, --base-url, --redis, --out, …), which
// RunLive appends. The command's standard output and error are RunLive's
// to set.
type WorkerCommand func(ctx context.Context, args []string) *exec.Cmd

// exitInterruptedMember is the exit code of a member stopped by an
// interrupt (simbench's 130): the others of a member that failed.
const exitInterruptedMember = 130

// workerStopGrace is how long a member interrupted with the run may take
// to write what it measured before it is killed.
const workerStopGrace = 10 * time.Second

// runFleetStrategy runs strategy st live on a fleet of fo.n OS processes:
// it starts the fake services (at time scale f, as for one process), starts
// fo.n members with launch, each running its process's share against
// them, sets the services' epoch at the start the members meet at, waits
// for every member, and merges what they wrote (MergeMembers) with the
// services' own accounting. Reasons the strategy is invalid (a member's
// timing, a member's fallback to a local share) come back as the run's
// invalid, named by process.
func runFleetStrategy(ctx context.Context, ls *liveSetup, st *scenarios.Strategy, fo *fleetOptions, opts *LiveOptions) (*results.StrategyResult, []results.EventSpan, string, error) {
	orig := ls.orig
	fs, err := startFleetServices(ls)
	if err != nil {
		return nil, nil, "", err
	}
	defer fs.srv.Close()
	dir, err := os.MkdirTemp("", "simbench-fleet-")
	if err != nil {
		return nil, nil, "", fmt.Errorf("live: %w", err)
	}
	defer os.RemoveAll(dir)
	runID := fmt.Sprintf("%s-%d-%d", orig.Name, os.Getpid(), time.Now().UnixNano())
	ro, err := quota.ParseURL(fo.meet)
	if err != nil {
		return nil, nil, "", err
	}
	rdb := quota.NewClient(ro)
	defer rdb.Close()
	watch := &memberSetup{n: fo.n, runID: runID, rdb: rdb, wait: DefaultRendezvousWait}
	cmds, errs, err := startMembers(ctx, ls, st, fo, opts, fs.base, dir, runID)
	if err != nil {
		return nil, nil, "", err
	}
	epochErr, err := waitMembers(ctx, fs.srv, watch, st.Name, cmds, errs)
	if err != nil {
		return nil, nil, "", err
	}
	merged, r, err := readFleet(ctx, dir, fo.n, st.Name)
	if r == nil {
		return nil, nil, "", err
	}
	fs.addBooks(r, orig.Duration)
	invalid := r.Invalid
	r.Invalid = ""
	if epochErr != nil && ctx.Err() == nil {
		why := fmt.Sprintf("the provider's windows and timed events could not be counted from the members' start (%v), so they fell elsewhere in the workload than in virtual time", epochErr)
		if invalid != "" {
			why = invalid + "; " + why
		}
		invalid = why
	}
	var spans []results.EventSpan
	for _, e := range merged.Events {
		if e.Kind == "quota-fallback" {
			spans = append(spans, e)
		}
	}
	return r, spans, invalid, ctx.Err()
}

// fleetServices are the fake services a fleet's members share: the
// server, each service's configuration and name, and the base URL the
// members are given.
type fleetServices struct {
	srv   *fakeapi.Server
	svcs  []fakeapi.ServiceConfig
	names []string
	base  string
}

// startFleetServices starts the fake services of ls's scenario at its
// time scale, as for one process.
func startFleetServices(ls *liveSetup) (*fleetServices, error) {
	orig := ls.orig
	fs := &fleetServices{}
	for i := range orig.Services {
		fs.svcs = append(fs.svcs, setup.ServeConfig(orig, &orig.Services[i]))
		fs.names = append(fs.names, orig.Services[i].Name)
	}
	srv, err := fakeapi.Start(fakeapi.ServerConfig{Services: fs.svcs, Seed: ls.sc.Seed, TimeScale: ls.f, Warn: os.Stderr, MaxConns: -1})
	if err != nil {
		return nil, err
	}
	fs.srv = srv
	fs.base = strings.TrimSuffix(srv.URL(fs.names[0]), "/"+fs.names[0])
	return fs, nil
}

// addBooks adds the services' own accounting to the merged figures r of a
// run of duration d (the scenario's own time): the provider saw every
// member's attempts, so its peak in flight is the fleet's, where the
// members' summed peaks are only a bound.
func (fs *fleetServices) addBooks(r *results.StrategyResult, d time.Duration) {
	stats := fs.srv.Stats()
	models := make([]collect.ModelStats, len(fs.names))
	for i, name := range fs.names {
		models[i] = collect.ModelStats{Stats: stats.Services[name], Cfg: fs.svcs[i]}
	}
	if r.QuotaUsed == nil {
		r.QuotaUsed = map[string]float64{}
	}
	collect.AddServiceBooks(r, fs.names, models, d)
	for i, name := range fs.names {
		r.PeakInFlight[name] = models[i].Stats.PeakConcurrency
	}
	r.PeakInFlightBound = false
	r.WastedWorkS = setup.Round6(r.WastedWorkS)
}

// startMembers starts the fo.n members of strategy st's fleet with
// opts.Worker, each told the services' base URL, the folder dir to write
// into and the run's runID; their standard errors are kept in errs. When
// one fails to start, those started are killed.
func startMembers(ctx context.Context, ls *liveSetup, st *scenarios.Strategy, fo *fleetOptions, opts *LiveOptions, base, dir, runID string) ([]*exec.Cmd, []*bytes.Buffer, error) {
	cmds := make([]*exec.Cmd, fo.n)
	errs := make([]*bytes.Buffer, fo.n)
	for i := range fo.n {
		args := memberArgs(ls.orig, st, fo, opts, ls.f, i, base, dir, runID)
		cmd := opts.Worker(ctx, args)
		errs[i] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = nil, errs[i]
		// Interrupted with the run, a member writes what it measured.
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = workerStopGrace
		if err := cmd.Start(); err != nil {
			for _, c := range cmds[:i] {
				_ = c.Process.Kill()
				_ = c.Wait()
			}
			return nil, nil, fmt.Errorf("live: starting fleet member %d of %d: %w", i, fo.n, err)
		}
		cmds[i] = cmd
	}
	return cmds, errs, nil
}

// waitMembers sets the services' epoch at the start the members meet at
// and waits for every member of strategy name's fleet. Each member is
// waited for on a goroutine of its own; the first to fail stops the
// others (which would wait at the rendezvous for it) and the wait for the
// start. It returns why the epoch could not be set (nil: it was) and an
// error naming every member that failed other than by the run's end.
func waitMembers(ctx context.Context, srv *fakeapi.Server, watch *memberSetup, name string, cmds []*exec.Cmd, errs []*bytes.Buffer) (epochErr, err error) {
	waitCtx, stopWait := context.WithCancel(ctx)
	defer stopWait()
	werrs := make([]error, len(cmds))
	var wg sync.WaitGroup
	for i, cmd := range cmds {
		wg.Go(func() {
			if werrs[i] = cmd.Wait(); werrs[i] != nil {
				stopWait()
				for _, c := range cmds {
					_ = c.Process.Signal(os.Interrupt) // one that has exited ignores it
				}
			}
		})
	}
	epochErr = alignEpoch(waitCtx, srv, watch, name)
	wg.Wait()
	var failed []string
	for i, werr := range werrs {
		var ee *exec.ExitError
		if werr != nil && ctx.Err() == nil && !(errors.As(werr, &ee) && ee.ExitCode() == exitInterruptedMember) {
			failed = append(failed, fmt.Sprintf("member %d (p%d): %v: %s", i, i+1, werr, strings.TrimSpace(errs[i].String())))
		}
	}
	if len(failed) > 0 {
		return epochErr, fmt.Errorf("live: strategy %q: %s", name, strings.Join(failed, "; "))
	}
	return epochErr, nil
}

// readFleet reads what the n members wrote into dir and merges it
// (MergeMembers), returning the merged results and strategy name's
// figures in them. A member interrupted before it measured anything is
// left out when the run was ended; r is nil when nothing was measured
// (err says why, or is the context's).
func readFleet(ctx context.Context, dir string, n int, name string) (merged *results.Results, r *results.StrategyResult, err error) {
	var ms []*Member
	for i := range n {
		m, err := ReadMember(filepath.Join(dir, memberDirName(i)))
		if err != nil {
			if ctx.Err() != nil {
				continue // interrupted before it measured anything
			}
			return nil, nil, err
		}
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return nil, nil, ctx.Err()
	}
	merged, err = MergeMembers(ms)
	if err != nil && !(errors.Is(err, ErrMissingMembers) && ctx.Err() != nil) {
		return nil, nil, err
	}
	if r = merged.Strategy(name); r == nil {
		return nil, nil, ctx.Err()
	}
	return merged, r, nil
}

// memberArgs are the flags of member i's `simbench worker`: the run's
// settings, the same for every member, and its own place.
func memberArgs(sc *scenarios.Scenario, st *scenarios.Strategy, fo *fleetOptions, opts *LiveOptions, f float64, i int, base, dir, runID string) []string {
	args := []string{
		"--member", fmt.Sprintf("%d/%d", i, fo.n), "--base-url", base, "--redis", fo.redis, "--rendezvous", fo.meet,
		"--out", filepath.Join(dir, memberDirName(i)), "--run-id", runID, "--strategy", st.Name,
		"--seed", strconv.FormatUint(sc.Seed, 10), "--duration", sc.Duration.String(),
		"--time-scale", strconv.FormatFloat(f, 'g', -1, 64), "--quota", string(fo.mode),
	}
	shares := make([]string, len(fo.shares))
	for k, s := range fo.shares {
		shares[k] = strconv.FormatFloat(s, 'g', -1, 64)
	}
	args = append(args, "--shares", strings.Join(shares, ","))
	if opts.AllowRedisFallback {
		args = append(args, "--redis-fallback")
	}
	// A member's invalid run is the merged run's to mark (and its command's
	// to exit on), not a member's failure.
	args = append(args, "--allow-invalid")
	return args
}

// alignEpoch waits for the start the members of strategy st's fleet meet
// at (the one meeting at watch's rendezvous, whose run id is this
// launch's own) and counts the provider's time from it: its windows' edges and timed events then fall where the virtual
// run's do, a whole number of windows after the workload's start. Without
// it they would count from the provider's own start, before the members
// were even launched.
func alignEpoch(ctx context.Context, srv *fakeapi.Server, watch *memberSetup, st string) error {
	offset, err := redisOffset(ctx, watch.rdb)
	if err != nil {
		return err
	}
	start, err := watch.awaitStart(ctx, st, offset)
	if err != nil {
		return err
	}
	srv.SetEpoch(start)
	if late := time.Since(start); late > 0 {
		// Requests may have come in before: the provider counted them in
		// windows of its own start.
		return fmt.Errorf("set %v after the members started", late.Round(time.Millisecond))
	}
	return nil
}
