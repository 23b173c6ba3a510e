package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/gate"
	"github.com/simbench/simbench/live"
	"github.com/simbench/simbench/pipeline"
	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// RunCmd runs a scenario's strategies and compares them.
type RunCmd struct {
	Scenario      string           `arg:"" name:"file|name" predictor:"scenario" help:"A scenario file, or the name of a built-in scenario (see 'simbench scenarios')."`
	Strategy      []string         `short:"s" sep:"," placeholder:"NAME" help:"Run only these strategies, comma-separated (default: all)."`
	Seed          *uint64          `env:"SIMBENCH_SEED" help:"Replace the scenario's seed."`
	Duration      positiveDuration `placeholder:"10m" env:"SIMBENCH_DURATION" help:"Replace the scenario's (virtual) duration."`
	Out           string           `short:"o" placeholder:"DIR" env:"SIMBENCH_OUT" help:"Where results.json, the plots and the reports go (default: out/<scenario>)."`
	JSON          bool             `help:"Print results.json to standard output instead of the table."`
	NoReports     bool             `help:"Write results.json only: no plots, report.html or report.md."`
	Parallel      int              `env:"SIMBENCH_PARALLEL" help:"Strategies simulated at once (default: the number of CPUs)."`
	Live          bool             `help:"Run in real time with real HTTP clients against fake servers on 127.0.0.1, one strategy after another."`
	TimeScale     float64          `default:"1" placeholder:"F" env:"SIMBENCH_TIME_SCALE" help:"With --live: multiply every duration by F and divide every rate by F (0.01 plays 10 minutes in 6 seconds)."`
	Processes     int              `placeholder:"N" help:"With --live: run the workload on N simbench worker processes at once (each its own OS process, sched.Runner and connections) behind one API key, sharing the fake servers and meeting at a rendezvous on Redis (started from PATH unless --redis); results show each process's figures and the totals (default: the scenario's workload.processes, else 1)."`
	Shares        []float64        `sep:"," placeholder:"W,..." help:"With --live and several processes: each process's share of the load, one weight per process (default: the scenario's workload.process_shares, else even)."`
	Quota         string           `placeholder:"MODE" help:"With --live and several processes: full (every process at the full limits), split (limit÷N each) or shared (one quota in Redis), for every strategy (default: each strategy's quota.mode in the scenario, else full)."`
	Redis         string           `placeholder:"URL" env:"SIMBENCH_REDIS" help:"With --quota shared: the redis:// URL of the server to share the quota through (default: start redis-server from PATH on a free 127.0.0.1 port for the run)."`
	RedisFallback bool             `help:"With --quota shared: when Redis cannot be reached, run each process on its local share (limit÷N) instead of failing the run, and do not mark the run invalid when Redis is lost during it."`
	AllowInvalid  bool             `help:"With --live: exit 0 even when a strategy's run is invalid (the machine could not keep its timing); it is still marked invalid. Without it such a run exits 3."`
	Seeds         seedCount        `placeholder:"N" env:"SIMBENCH_SEEDS" help:"Run every strategy with N seeds (the scenario's and the N−1 after it): figures become means with 95% intervals. Also the seeds of the decision's sweep (default: 1 for the comparison, ${seeds} for the decision)."`
	Columns       []string         `sep:"," placeholder:"COL,..." help:"The table's columns, comma-separated: default, all, or names such as 'answer p95,mean ms,answer mean,L turns,L attempts' (default: default)."`
	MaxMemory     byteSize         `placeholder:"4GiB" env:"SIMBENCH_MAX_MEMORY" help:"Refuse a run whose estimated memory exceeds this (exit 2), and hold the process's heap to it; with --live, also the calls in flight, the rest not sent (default: 4GiB)."`
	NoRecommend   bool             `help:"Skip the decision (what to set, verified by a sweep over seeds) and the load check (the workload's demand, simulated with every limit lifted); print the arithmetic only."`
	Trace         string           `placeholder:"FILE" help:"Write one record per attempt of every strategy to FILE (JSON Lines, the trace format calibrate reads), a section per strategy; finished atomically."`
	Threshold     []string         `placeholder:"[STRATEGY:]METRIC<VALUE" help:"Fail (exit 1) unless METRIC meets the bound in every strategy (or in STRATEGY), such as 'answer_p95<5s' or 'bounded-64:rate_limited_share<=1%'; a time takes its unit (the table's ms, or s), a share is a fraction or a percent; repeatable, added to the scenario's [thresholds]."`
	cacheFlags    `embed:""`
	HDR           string    `name:"hdr" placeholder:"DIR" help:"Write each strategy's turn and call latencies (microseconds) as HdrHistogram interval logs, DIR/<strategy>-turn.hlog and DIR/<strategy>-call.hlog, one interval per seed; each finished atomically."`
	Stdout        io.Writer `kong:"-"` // nil: os.Stdout

	private    string          // the folder of the run's private cache (privateCache), removed when the run ends
	isTerminal func() bool     // tests: pretend stdout is (not) a terminal
	parent     context.Context // tests: a context to cancel in place of Ctrl-C
	afterSim   func()          // tests: called when the simulation is done, before the decision
}

// Run simulates, writes DIR/results.json (and the reports) atomically, and
// prints the comparison (pipeline.Run). On Ctrl-C it writes what was
// measured, marked partial, and exits with code 130.
func (c *RunCmd) Run() error {
	sc, err := openScenario(c.Scenario)
	if err != nil {
		return err
	}
	dir, err := outDir(c.Out, sc.Name, "")
	if err != nil {
		return err
	}
	out, tty := console(c.Stdout, c.isTerminal)
	ctx, stop := interruptible(c.parent)
	defer stop()
	o, err := c.options(sc)
	if c.private != "" {
		defer os.RemoveAll(c.private)
	}
	if err != nil {
		return err
	}
	o.Dir, o.Out, o.Stderr, o.AfterSim = dir, out, os.Stderr, c.afterSim
	o.Table = reports.TableOptions{Color: colour(tty), Columns: c.Columns, Width: terminalWidth(tty)}
	if tty && !c.JSON {
		o.Bars = pipeline.Bars{Decision: decisionBarsOn(out), Sim: func(opts *sim.Options) func(bool) {
			pr := newProgress(out, sc, opts)
			opts.Progress = pr.update
			return pr.wait
		}}
	}
	return exitOf(pipeline.Run(ctx, sc, o))
}

// exitOf gives an error of the pipeline the exit code of its kind.
func exitOf(err error) error {
	var pe *pipeline.Error
	if !errors.As(err, &pe) {
		return err
	}
	code := map[pipeline.Kind]int{pipeline.Invalid: exitInvalid, pipeline.InvalidRun: exitInvalidRun, pipeline.Interrupted: exitInterrupted}[pe.Kind]
	return codedError{err, cmp.Or(code, exitFailure)}
}

// options checks the flags against the scenario and returns the run's
// options: the simulation's (MaxMemory set to the budget), the decision's
// and the thresholds the run is held to; a flag the run cannot take is
// invalid input.
func (c *RunCmd) options(sc *scenarios.Scenario) (pipeline.RunOptions, error) {
	invalid := func(err error) (pipeline.RunOptions, error) {
		return pipeline.RunOptions{}, codedError{err, exitInvalid}
	}
	if err := reports.CheckColumns(c.Columns); err != nil {
		return invalid(fmt.Errorf("--columns: %w", err))
	}
	if c.Seeds < 0 || (c.Seeds > 1 && c.Live) {
		return invalid(fmt.Errorf("--seeds %d: want at least 1, and one seed with --live", c.Seeds))
	}
	opts := sim.Options{Strategies: c.Strategy, Seed: c.Seed, Duration: c.Duration.D(), Parallel: c.Parallel, Seeds: int(c.Seeds),
		MaxMemory: int64(c.MaxMemory), Version: simbenchVersion()}
	if opts.MaxMemory == 0 {
		opts.MaxMemory = sim.DefaultMaxMemory
	}
	applied, err := opts.Apply(sc)
	if err != nil {
		return invalid(err)
	}
	thresholds, err := gate.Thresholds(applied, c.Threshold)
	if err != nil {
		return invalid(err)
	}
	switch live.QuotaMode(c.Quota) {
	case "", live.QuotaFull, live.QuotaSplit, live.QuotaShared:
	default:
		return invalid(fmt.Errorf("--quota %q: want full, split or shared", c.Quota))
	}
	if (c.Processes != 0 || len(c.Shares) > 0 || c.Redis != "" || (c.Quota != "" && c.Quota != "full")) && !c.Live {
		return invalid(fmt.Errorf("--processes, --shares, --quota and --redis go with --live"))
	}
	if scale := c.timeScale(); scale != 1 && !c.Live {
		return invalid(fmt.Errorf("--time-scale goes with --live (got %g)", c.TimeScale))
	}
	if c.Live {
		if c.TimeScale == 0 { // kong's default is 1: a 0 was given
			return invalid(fmt.Errorf("--time-scale 0: want a number from %g to %g", live.MinTimeScale, live.MaxTimeScale))
		}
		if err := c.liveOptions(opts).Validate(sc); err != nil {
			return invalid(err)
		}
		if n := cmp.Or(c.Processes, sc.Workload.Processes); n > 1 && (c.Trace != "" || c.HDR != "") {
			return invalid(fmt.Errorf("--trace and --hdr with %d processes: a fleet's members write neither; run one process (--processes 1) for them", n))
		}
	}
	o := pipeline.RunOptions{Trace: c.Trace, HDR: c.HDR, Rule: rule(decision.DefaultMaxRateLimitedShare, decision.DefaultTolerance), NoRecommend: c.NoRecommend,
		NoReports: c.NoReports, JSON: c.JSON, Thresholds: thresholds, AllowInvalid: c.AllowInvalid}
	if c.Live {
		live := c.liveOptions(opts)
		o.Live = &live
	} else {
		opts.Cache = c.open(os.Stderr)
		if opts.Cache == nil && !c.NoRecommend {
			opts.Cache, c.private = privateCache()
		}
	}
	o.Sim = opts
	return o, nil
}

// liveOptions are the live run's options from the flags.
func (c *RunCmd) liveOptions(opts sim.Options) live.LiveOptions {
	return live.LiveOptions{Options: opts, TimeScale: c.timeScale(), Processes: c.Processes, Shares: c.Shares,
		Quota: live.QuotaMode(c.Quota), Redis: c.Redis, AllowRedisFallback: c.RedisFallback, Worker: c.worker}
}

// worker runs a fleet member as `simbench worker` of this very binary on
// the same scenario, for a live run of several processes.
func (c *RunCmd) worker(ctx context.Context, args []string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exec.CommandContext(ctx, exe, append([]string{"worker", c.Scenario}, args...)...)
}

// timeScale is --time-scale, 1 when unset (callers that build the struct
// without kong's defaults).
func (c *RunCmd) timeScale() float64 {
	if c.TimeScale == 0 {
		return 1
	}
	return c.TimeScale
}
