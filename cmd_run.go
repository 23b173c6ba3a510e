package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/redis/go-redis/v9"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/internal/atomicfile"
	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/trace"
)

// RunCmd runs a scenario's strategies and compares them.
type RunCmd struct {
	Scenario     string           `arg:"" name:"file|name" predictor:"scenario" help:"A scenario file, or the name of a built-in scenario (see 'simbench scenarios')."`
	Strategy     []string         `short:"s" sep:"," placeholder:"NAME" help:"Run only these strategies, comma-separated (default: all)."`
	Seed         *uint64          `env:"SIMBENCH_SEED" help:"Replace the scenario's seed."`
	Duration     positiveDuration `placeholder:"10m" env:"SIMBENCH_DURATION" help:"Replace the scenario's (virtual) duration."`
	Out          string           `short:"o" placeholder:"DIR" env:"SIMBENCH_OUT" help:"Where results.json, the plots and the reports go (default: out/<scenario>)."`
	JSON         bool             `help:"Print results.json to standard output instead of the table."`
	NoReports    bool             `help:"Write results.json only: no plots, report.html or report.md."`
	Parallel     int              `env:"SIMBENCH_PARALLEL" help:"Strategies simulated at once (default: the number of CPUs)."`
	Live         bool             `help:"Run in real time with real HTTP clients against fake servers on 127.0.0.1, one strategy after another."`
	TimeScale    float64          `default:"1" placeholder:"F" env:"SIMBENCH_TIME_SCALE" help:"With --live: multiply every duration by F and divide every rate by F (0.01 plays 10 minutes in 6 seconds)."`
	Processes    int              `placeholder:"N" help:"With --live: run the workload on N schedulers at once (one sched.Runner each, with its own connections) behind one API key, sharing the fake servers; results show each process's figures and the totals (default: the scenario's workload.processes, else 1)."`
	Shares       []float64        `sep:"," placeholder:"W,..." help:"With --live and several processes: each process's share of the load, one weight per process (default: the scenario's workload.process_shares, else even)."`
	Quota        string           `placeholder:"MODE" help:"With --live and several processes: full (every process at the full limits), split (limit÷N each) or shared (one quota in Redis), for every strategy (default: each strategy's quota.mode in the scenario, else full)."`
	Redis        string           `placeholder:"URL" env:"SIMBENCH_REDIS" help:"With --quota shared: the redis:// URL of the server to share the quota through (default: start redis-server from PATH on a free 127.0.0.1 port for the run)."`
	AllowInvalid bool             `help:"With --live: exit 0 even when a strategy's run is invalid (the machine could not keep its timing); it is still marked invalid. Without it such a run exits 3."`
	Seeds        int              `placeholder:"N" env:"SIMBENCH_SEEDS" help:"Run every strategy with N seeds (the scenario's and the N−1 after it): figures become means with 95% intervals. Also the seeds of the decision's sweep (default: 1 for the comparison, 3 for the decision)."`
	Columns      []string         `sep:"," placeholder:"COL,..." help:"The table's columns, comma-separated: default, all, or names such as 'answer p95,mean ms,answer mean,L turns,L attempts' (default: default)."`
	MaxMemory    byteSize         `placeholder:"4GiB" env:"SIMBENCH_MAX_MEMORY" help:"Refuse a run whose estimated memory exceeds this (exit 2), and hold the process's heap to it (default: 4GiB)."`
	NoRecommend  bool             `help:"Skip the decision (what to set, verified by a sweep over seeds); print the arithmetic only."`
	Trace        string           `placeholder:"FILE" help:"Write one record per attempt of every strategy to FILE (JSON Lines, the trace format calibrate reads), a section per strategy; finished atomically."`
	Threshold    []string         `placeholder:"[STRATEGY:]METRIC<VALUE" help:"Fail (exit 1) unless METRIC meets the bound in every strategy (or in STRATEGY), such as 'answer_p95<5s' or 'bounded-64:rate_limited_share<=0.01'; repeatable, added to the scenario's [thresholds]."`
	HDR          string           `name:"hdr" placeholder:"DIR" help:"Write each strategy's turn and call latencies (microseconds) as HdrHistogram interval logs, DIR/<strategy>-turn.hlog and DIR/<strategy>-call.hlog, one interval per seed; each finished atomically."`
	Stdout       io.Writer        `kong:"-"` // nil: os.Stdout

	isTerminal func() bool     // tests: pretend stdout is (not) a terminal
	parent     context.Context // tests: a context to cancel in place of Ctrl-C
	afterSim   func()          // tests: called when the simulation is done, before the decision
}

// Run simulates, writes DIR/results.json (and the reports) atomically, and
// prints the comparison. On Ctrl-C it writes what was measured, marked
// partial, and exits with code 130.
func (c *RunCmd) Run() error {
	sc, err := openScenario(c.Scenario)
	if err != nil {
		return err
	}
	out, tty := console(c.Stdout, c.isTerminal)
	ctx, stop := interruptible(c.parent)
	defer stop()

	if err := reports.CheckColumns(c.Columns); err != nil {
		return codedError{fmt.Errorf("--columns: %w", err), exitInvalid}
	}
	if c.Seeds < 0 || (c.Seeds > 1 && c.Live) {
		return codedError{fmt.Errorf("--seeds %d: want at least 1, and one seed with --live", c.Seeds), exitInvalid}
	}
	opts := sim.Options{Strategies: c.Strategy, Seed: c.Seed, Duration: c.Duration.D(), Parallel: c.Parallel, Seeds: c.Seeds, MaxMemory: int64(c.MaxMemory)}
	budget := opts.MaxMemory
	if budget == 0 {
		budget = sim.DefaultMaxMemory
	}
	// The binary collects garbage lazily (sim.GCPercent); a soft limit at
	// the budget keeps the heap within it when the live set grows.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(budget))
	applied, err := opts.Apply(sc)
	if err != nil {
		return codedError{err, exitInvalid}
	}
	thresholds, err := c.thresholds(applied)
	if err != nil {
		return codedError{err, exitInvalid}
	}
	scale := c.TimeScale
	if scale == 0 {
		scale = 1 // the flag's default, for callers that build the struct
	}
	switch sim.QuotaMode(c.Quota) {
	case "", sim.QuotaFull, sim.QuotaSplit, sim.QuotaShared:
	default:
		return codedError{fmt.Errorf("--quota %q: want full, split or shared", c.Quota), exitInvalid}
	}
	if (c.Processes != 0 || len(c.Shares) > 0 || c.Redis != "" || (c.Quota != "" && c.Quota != "full")) && !c.Live {
		return codedError{fmt.Errorf("--processes, --shares, --quota and --redis go with --live"), exitInvalid}
	}
	if scale < 0 || (scale != 1 && !c.Live) {
		return codedError{fmt.Errorf("--time-scale must be above 0 and goes with --live (got %g)", c.TimeScale), exitInvalid}
	}
	if c.Trace != "" {
		tw, err := trace.Create(c.Trace)
		if err != nil {
			return err
		}
		opts.Trace = tw
		// Aborted unless the run measured something: a failed run leaves
		// no trace, an interrupted one keeps what was measured.
		defer tw.Abort()
	}
	var hdrs []sim.HDRLatencies
	if c.HDR != "" {
		if err := hdrDir(c.HDR); err != nil {
			return codedError{err, exitInvalid}
		}
		var mu sync.Mutex
		opts.HDR = func(l sim.HDRLatencies) {
			mu.Lock()
			defer mu.Unlock()
			hdrs = append(hdrs, l)
		}
	}
	var bars *progress
	if tty && !c.JSON {
		bars = newProgress(out, sc, &opts)
		opts.Progress = bars.update
	}
	var res *sim.Results
	var runErr error
	if c.Live {
		if c.Quota == string(sim.QuotaShared) || sc.Workload.Processes > 1 {
			// A process that loses Redis says so in the results (events,
			// per-process fallbacks); go-redis's own dial errors would
			// only scroll over the progress bars.
			redis.SetLogger(quietRedis{})
		}
		res, runErr = sim.RunLive(ctx, sc, sim.LiveOptions{Options: opts, TimeScale: scale,
			Processes: c.Processes, Shares: c.Shares, Quota: sim.QuotaMode(c.Quota), Redis: c.Redis})
	} else {
		res, runErr = sim.RunSeeds(ctx, sc, opts)
	}
	if bars != nil {
		bars.wait(runErr != nil)
	}
	if res == nil {
		return runErr
	}
	if opts.Trace != nil {
		if err := opts.Trace.Close(); err != nil {
			return err
		}
	}
	if c.HDR != "" {
		if err := writeHDR(c.HDR, hdrs); err != nil {
			return err
		}
	}
	if c.afterSim != nil {
		c.afterSim()
	}
	// The decision (what to set, verified by a sweep over seeds) and the
	// arithmetic it starts from, as recommend computes them. An interrupt
	// here leaves them out and still writes the results.
	if runErr == nil {
		o := decision.Options{Rule: rule(reports.DefaultMaxRateLimitedShare, reports.DefaultTolerance), Seeds: c.Seeds, Seed: c.Seed, Duration: c.Duration.D()}
		var d *decision.Result
		var err error
		if c.NoRecommend {
			d, err = decision.Arithmetic(ctx, sc, o)
		} else {
			d, err = decision.Decide(ctx, sc, o)
		}
		switch {
		case err != nil && ctx.Err() == nil:
			return err
		case err == nil:
			for _, p := range d.Plans {
				if res.Recommendation == nil {
					res.Recommendation = map[string]sim.Recommendation{}
				}
				res.Recommendation[p.Service.Name] = p.Recommendation()
			}
			if d.Load != nil {
				d.Load.Annotate(res.Recommendation)
			}
			if !c.NoRecommend {
				res.Decision = &d.Decision
				if d.Plan != nil && d.Row.Chosen > 0 {
					rec := res.Recommendation[d.Plan.Service.Name]
					rec.VerifiedCap = d.Row.Chosen
					res.Recommendation[d.Plan.Service.Name] = rec
				}
			}
		}
	}

	dir := c.Out
	if dir == "" {
		dir = filepath.Join("out", sc.Name)
	}
	if err := writeResults(dir, res, !c.NoReports, reports.Options{}); err != nil {
		return err
	}
	if c.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		if err := reports.WriteTableWith(out, res, reports.TableOptions{Color: colour(tty), Columns: c.Columns}); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nresults: %s\n", filepath.Join(dir, reports.ResultsFile))
		if !c.NoReports {
			fmt.Fprintf(out, "report:  %s\n", filepath.Join(dir, reports.HTMLFile))
		}
	}
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) {
			return codedError{fmt.Errorf("interrupted: partial results written to %s", dir), exitInterrupted}
		}
		return runErr
	}
	if ctx.Err() != nil && res.Decision == nil && !c.NoRecommend {
		// Ctrl-C after the simulation, while the decision's sweep ran: the
		// comparison is whole and written, the decision is left out.
		return codedError{fmt.Errorf("interrupted while deciding what to set: the comparison is complete and written to %s, without the decision", dir), exitInterrupted}
	}
	if err := invalidRun(res); err != nil && !c.AllowInvalid {
		return err
	}
	if len(thresholds) > 0 {
		w := out
		if c.JSON {
			w = os.Stderr
		}
		return checkThresholds(w, res, thresholds)
	}
	return nil
}

// thresholds returns the scenario's [thresholds] and the --threshold flags,
// or an error naming a flag that does not parse or names a strategy the run
// does not have.
func (c *RunCmd) thresholds(sc *scenarios.Scenario) ([]scenarios.Threshold, error) {
	var out []scenarios.Threshold
	for _, t := range sc.Thresholds {
		if t.Strategy == "" || sc.Strategy(t.Strategy) != nil { // one left out by --strategy does not apply
			out = append(out, t)
		}
	}
	for _, f := range c.Threshold {
		t, err := scenarios.ParseThreshold(f)
		if err != nil {
			return nil, fmt.Errorf("--threshold: %w", err)
		}
		if t.Strategy != "" && sc.Strategy(t.Strategy) == nil {
			return nil, fmt.Errorf("--threshold %q: the run has no strategy %q", f, t.Strategy)
		}
		t.Source = "--threshold " + f
		out = append(out, t)
	}
	return out, nil
}

// checkThresholds prints every threshold with each strategy's measured
// value and whether it passed, and returns an error (exit 1) naming the
// failures when any failed. A metric with no data fails.
func checkThresholds(w io.Writer, res *sim.Results, ts []scenarios.Threshold) error {
	fmt.Fprintln(w, "\nthresholds:")
	var failed []string
	for _, t := range ts {
		fmt.Fprintf(w, "  %s  (%s)\n", t.String(), t.Source)
		var bad []string
		for i := range res.Strategies {
			s := &res.Strategies[i]
			if t.Strategy != "" && t.Strategy != s.Name {
				continue
			}
			v, ok := s.Metric(t.Metric)
			verdict, shown := "pass", strconv.FormatFloat(v, 'g', 6, 64)
			switch {
			case !ok:
				verdict, shown = "FAIL", "no data"
			case !t.Holds(v):
				verdict = "FAIL"
			}
			if ok && scenarios.IsTimeMetric(t.Metric) {
				shown += "s"
			}
			if verdict == "FAIL" {
				bad = append(bad, s.Name)
			}
			fmt.Fprintf(w, "    %-24s %-12s %s\n", s.Name, shown, verdict)
		}
		if len(bad) > 0 {
			failed = append(failed, fmt.Sprintf("%s failed for %s", t.String(), strings.Join(bad, ", ")))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("thresholds: %s", strings.Join(failed, "; "))
	}
	return nil
}

// invalidRun is the exit-3 error of a run with an invalid strategy (a live
// run the machine could not keep the timing of), naming each; nil when
// every strategy is valid.
func invalidRun(res *sim.Results) error {
	var names []string
	for _, s := range res.Strategies {
		if s.Invalid != "" {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 && res.Invalid == "" {
		return nil
	}
	what := "the run is invalid"
	if len(names) > 0 {
		what = "invalid: " + strings.Join(names, ", ")
	}
	return codedError{fmt.Errorf("%s (%s); the results are written and marked so; --allow-invalid exits 0 anyway", what, res.Invalid), exitInvalidRun}
}

// writeResults writes results.json atomically, then the reports.
func writeResults(dir string, res *sim.Results, withReports bool, opts reports.Options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := reports.WriteFileAtomic(filepath.Join(dir, reports.ResultsFile), append(data, '\n'), 0o644); err != nil {
		return err
	}
	if withReports {
		if _, err := reports.WriteAll(dir, res, opts); err != nil {
			return fmt.Errorf("writing reports: %w", err)
		}
	}
	return nil
}

// hdrDir makes sure dir is a directory --hdr can write into, creating it
// when missing; an error says why not (such as a file in its place).
func hdrDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--hdr %s: %w", dir, err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("--hdr %s: not a directory", dir)
	}
	return nil
}

// writeHDR writes DIR/<strategy>-turn.hlog and DIR/<strategy>-call.hlog for
// every strategy in ls, one interval per seed in the order they ran, each
// file written atomically.
func writeHDR(dir string, ls []sim.HDRLatencies) error {
	type kinds struct{ turn, call []*hdrhistogram.Histogram }
	var order []string
	by := map[string]*kinds{}
	for _, l := range ls {
		k := by[l.Strategy]
		if k == nil {
			k = &kinds{}
			by[l.Strategy] = k
			order = append(order, l.Strategy)
		}
		k.turn = append(k.turn, l.Turn)
		k.call = append(k.call, l.Call)
	}
	for _, name := range order {
		k := by[name]
		for _, f := range []struct {
			kind, what string
			hs         []*hdrhistogram.Histogram
		}{{"turn", "turn latency", k.turn}, {"call", "tool call latency", k.call}} {
			var buf bytes.Buffer
			what := fmt.Sprintf("%s of strategy %s", f.what, name)
			if err := sim.WriteHDRLog(&buf, what, name+"-"+f.kind, f.hs); err != nil {
				return err
			}
			path := filepath.Join(dir, atomicfile.SafeName(name)+"-"+f.kind+".hlog")
			if err := reports.WriteFileAtomic(path, buf.Bytes(), 0o644); err != nil {
				return fmt.Errorf("--hdr: %w", err)
			}
		}
	}
	return nil
}

// quietRedis drops go-redis's log lines.
type quietRedis struct{}

// Printf implements go-redis's logger by doing nothing.
func (quietRedis) Printf(context.Context, string, ...any) {}
