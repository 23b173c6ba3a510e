package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/pipeline"
	"github.com/simbench/simbench/sim"
)

// SweepCmd runs one strategy over a range of caps and shows where more
// concurrency stops paying.
type SweepCmd struct {
	Scenario   string           `arg:"" name:"file|name" predictor:"scenario" help:"A scenario file, or the name of a built-in scenario."`
	Dirs       []string         `arg:"" optional:"" name:"dir" help:"With --plan, --shard or --merge: the folders the shards have written so far (their --out)."`
	Plan       bool             `help:"Write plan.json to --out: the runs the sweep needs next that the folders given do not hold, and print how many (0: the sweep is complete, merge it)."`
	Shard      memberFlag       `placeholder:"I/N" help:"Simulate slice I (0-based) of N of the runs the sweep needs next that the folders given do not hold, one file per run in --out (a run cache folder). Repeat plan and shards until the plan is empty. The Kubernetes Indexed Job's index is I: --shard $(JOB_COMPLETION_INDEX)/N."`
	Merge      bool             `help:"Sweep from the runs in the folders given alone (or in the Redis URL given, of --work) and write sweep.json and the decision to --out, as the sweep run in one piece writes them; a run none holds is named and the command exits 1."`
	Work       string           `placeholder:"redis://HOST:PORT/DB" help:"Work on the sweep held in the Redis at this URL together with every other worker given it (any host, started at any time): plan from the runs stored there, claim a run the sweep needs next under a lease, simulate and store it, until the plan is empty; then write sweep.json and the decision to --out, byte-identical to the sweep in one process. Progress goes to stderr. Give every worker the same scenario and flags, from the same build (another build is refused). --merge redis://… writes the sweep from the store alone."`
	Lease      time.Duration    `default:"${lease}" placeholder:"DURATION" help:"With --work: how long a claimed run stays claimed without a renewal (the worker renews it every third of this): a killed worker's run goes to another this long after (default: ${lease})."`
	Cap        string           `placeholder:"1..64" help:"Caps to try: A..B doubles from A to B, A..B/S steps by S, or a list A,B,C (default: recommend's range around the arithmetic's cap, extended while the choice sits at an edge)."`
	Strategy   string           `short:"s" placeholder:"NAME" help:"The strategy to vary (default: the one the scenario marks with recommend = true, else its first with a cap above 1)."`
	By         string           `placeholder:"sessions=10,20,40" help:"Cross the caps with loads: sessions=N,… or arrival_rate=R,… (turns/s)."`
	MaxShare   float64          `default:"${max_share}" env:"SIMBENCH_MAX_SHARE" help:"Largest share of 429s (429s ÷ attempts) the chosen cap may have."`
	Tolerance  float64          `default:"${tolerance}" env:"SIMBENCH_TOLERANCE" help:"Take the smallest cap that a paired test over the seeds shows no worse, by more than this fraction, than every better cap."`
	Seeds      seedCount        `default:"${seeds}" env:"SIMBENCH_SEEDS" help:"Seeds each cap is simulated with; figures are means with 95% intervals."`
	Seed       *uint64          `env:"SIMBENCH_SEED" help:"Replace the scenario's seed (the first of --seeds)."`
	Duration   positiveDuration `placeholder:"10m" env:"SIMBENCH_DURATION" help:"Replace the scenario's (virtual) duration."`
	Out        string           `short:"o" placeholder:"DIR" env:"SIMBENCH_OUT" help:"Where the sweep's plots and sweep.json go (default: out/<scenario>-sweep)."`
	JSON       bool             `help:"Print the sweep as JSON instead of the table."`
	NoStop     bool             `name:"no-early-stop" help:"Run every strategy as written to its end, also one that already cannot meet the rule (by default it is stopped there, and the decision says when): the same decision, that strategy's figures over its whole run, more CPU time."`
	Parallel   int              `env:"SIMBENCH_PARALLEL" help:"Runs simulated at once (default: the number of CPUs)."`
	cacheFlags `embed:""`
	Stdout     io.Writer `kong:"-"`
	Stderr     io.Writer `kong:"-"` // nil: os.Stderr

	parent   context.Context                                  // tests: a context to cancel in place of Ctrl-C
	progress func(strategy string, done, total time.Duration) // tests: follows the runs over the caps
}

// Run sweeps, prints a table per load with the knee and the chosen cap
// marked, and writes sweep.json and the sweep plots (pipeline.Sweep). On
// Ctrl-C it writes and prints the points measured, marked partial, and
// exits with 130.
func (c *SweepCmd) Run() error {
	sc, err := openScenario(c.Scenario)
	if err != nil {
		return err
	}
	o, err := c.options()
	if err != nil {
		return err
	}
	dir, err := outDir(c.Out, sc.Name, "-sweep")
	if err != nil {
		return err
	}
	out, tty := console(c.Stdout, nil)
	if c.Work != "" {
		return c.work(out, sc, dir, o)
	}
	if c.Plan || c.Shard.N > 0 || c.Merge {
		return c.sharded(out, sc, dir, o)
	}
	if len(c.Dirs) > 0 {
		return codedError{fmt.Errorf("folders %v given without --plan, --shard or --merge: add the one meant", c.Dirs), exitInvalid}
	}
	if tty && !c.JSON {
		o.Progress = func(runs int, each time.Duration) (func(string, time.Duration, time.Duration), func(bool)) {
			bar := newSweepBar(out, runs, each)
			return bar.update, bar.finish
		}
	}
	if c.progress != nil {
		o.Progress = func(int, time.Duration) (func(string, time.Duration, time.Duration), func(bool)) {
			return c.progress, func(bool) {}
		}
	}
	ctx, stop := interruptible(c.parent)
	defer stop()
	return exitOf(pipeline.Sweep(ctx, sc, c.pipelineOptions(out, dir, o)))
}

// options are the sweep's options as the flags give them, the run cache
// opened; a --cap range is said on stderr as the caps it runs.
func (c *SweepCmd) options() (decision.SweepOptions, error) {
	if err := checkDecisionFlags(int(c.Seeds), 0, c.MaxShare, c.Tolerance); err != nil {
		return decision.SweepOptions{}, err
	}
	var err error
	o := decision.SweepOptions{Strategy: c.Strategy, Rule: rule(c.MaxShare, c.Tolerance), Seeds: int(c.Seeds), Seed: c.Seed, Duration: c.Duration.D(),
		Cache: c.open(os.Stderr), Parallel: c.Parallel, NoEarlyStop: c.NoStop}
	if c.Cap != "" {
		if o.Caps, err = sim.ParseCaps(c.Cap); err != nil {
			return o, codedError{err, exitInvalid}
		}
		if note := capsNote(c.Cap, o.Caps); note != "" {
			errOut := c.Stderr
			if errOut == nil {
				errOut = os.Stderr
			}
			fmt.Fprintln(errOut, note)
		}
	}
	if c.By != "" {
		if o.Loads, err = sim.ParseLoads(c.By); err != nil {
			return o, codedError{err, exitInvalid}
		}
	}
	return o, nil
}

// pipelineOptions are the sweep's options for the pipeline: the
// decision's sweep o, written to dir and printed to out.
func (c *SweepCmd) pipelineOptions(out io.Writer, dir string, o decision.SweepOptions) pipeline.SweepOptions {
	return pipeline.SweepOptions{Sweep: o, Dir: dir, JSON: c.JSON, Out: out}
}

// capsNote says what a --cap range expands to, since A..B doubles rather
// than counting by one ("" for a list, which says it already).
func capsNote(spec string, caps []int) string {
	if !strings.Contains(spec, "..") {
		return ""
	}
	note := fmt.Sprintf("--cap %s runs the caps %s", spec, joinCaps(caps))
	if !strings.Contains(spec, "/") {
		lo, hi, _ := strings.Cut(spec, "..")
		note += fmt.Sprintf(" (A..B doubles from A; %s..%s/1 runs every cap)", lo, hi)
	}
	return note
}

// joinCaps writes caps as "1, 2, 4, 8".
func joinCaps(caps []int) string {
	s := make([]string, len(caps))
	for i, c := range caps {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ", ")
}
