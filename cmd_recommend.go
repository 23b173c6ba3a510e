package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/alecthomas/kong"

	"github.com/simbench/simbench/calibrate"
	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/internal/sweepwork"
	"github.com/simbench/simbench/pipeline"
)

// RecommendCmd says what to set: the concurrency cap and pace each
// service's limits allow, shown line by line, verified by simulation over
// several seeds.
type RecommendCmd struct {
	Scenario   string           `arg:"" name:"file|name" predictor:"scenario" help:"A scenario file, or the name of a built-in scenario."`
	Headroom   float64          `placeholder:"F" env:"SIMBENCH_HEADROOM" help:"Fraction of the limits to pace at; the rest is kept for retries (default: the tuned strategy's own headroom when it paces, else ${headroom})."`
	Strategy   string           `short:"s" placeholder:"NAME" help:"The strategy to tune (default: the one the scenario marks with recommend = true, else its first with a cap above 1)."`
	MaxShare   float64          `default:"${max_share}" env:"SIMBENCH_MAX_SHARE" help:"Largest share of 429s (429s ÷ attempts) the chosen cap may have."`
	Tolerance  float64          `default:"${tolerance}" env:"SIMBENCH_TOLERANCE" help:"Take the smallest cap that a paired test over the seeds shows no worse, by more than this fraction, than every better cap."`
	Seeds      seedCount        `default:"${seeds}" env:"SIMBENCH_SEEDS" help:"Seeds each cap is simulated with; figures are means with 95% intervals."`
	Seed       *uint64          `env:"SIMBENCH_SEED" help:"Replace the scenario's seed (the first of --seeds)."`
	Duration   positiveDuration `placeholder:"10m" env:"SIMBENCH_DURATION" help:"Replace the scenario's (virtual) duration for the verifying sweep."`
	NoVerify   bool             `help:"Print the arithmetic only; skip the verifying sweep."`
	NoStop     bool             `name:"no-early-stop" help:"Run every strategy as written to its end, also one that already cannot meet the rule (by default it is stopped there, and the decision says when): the same decision, that strategy's figures over its whole run, more CPU time."`
	JSON       bool             `help:"Print the recommendation as JSON."`
	Parallel   int              `env:"SIMBENCH_PARALLEL" help:"Runs simulated at once (default: the number of CPUs)."`
	cacheFlags `embed:""`
	Emit       string    `enum:",toml,go" default:"" placeholder:"toml|go" help:"Print only the decided settings: toml, a [[strategy]] block to paste into a scenario; go, the sched.Config literal."`
	Stdout     io.Writer `kong:"-"`

	parent   context.Context                                  // tests: a context to cancel in place of Ctrl-C
	progress func(strategy string, done, total time.Duration) // tests: follows the verifying sweep's runs
}

// decisionVars are the decision's (and calibrate's) defaults as kong
// variables, which the flags of run, sweep, recommend, report and
// calibrate interpolate (default:"${tolerance}"), so that no command writes
// a package's default as a literal.
var decisionVars = kong.Vars{
	"max_share": strconv.FormatFloat(decision.DefaultMaxRateLimitedShare, 'g', -1, 64),
	"tolerance": strconv.FormatFloat(decision.DefaultTolerance, 'g', -1, 64),
	"seeds":     strconv.Itoa(decision.DefaultSeeds),
	"headroom":  strconv.FormatFloat(decision.DefaultHeadroom, 'g', -1, 64),
	"ks_max":    strconv.FormatFloat(calibrate.DefaultKSMax, 'g', -1, 64),
	"lease":     sweepwork.DefaultLease.String(), // sweep --work's
}

// checkDecisionFlags rejects flag values no decision can use, as invalid
// input.
func checkDecisionFlags(seeds int, headroom, maxShare, tolerance float64) error {
	switch {
	case seeds < 1:
		return codedError{fmt.Errorf("--seeds %d: want at least 1", seeds), exitInvalid}
	case !(headroom >= 0 && headroom <= 1): // NaN fails every comparison
		return codedError{fmt.Errorf("--headroom %g: want a fraction in (0, 1]", headroom), exitInvalid}
	case !(maxShare >= 0 && maxShare <= 1):
		return codedError{fmt.Errorf("--max-share %g: want a fraction in [0, 1]", maxShare), exitInvalid}
	case !(tolerance >= 0) || math.IsInf(tolerance, 1):
		return codedError{fmt.Errorf("--tolerance %g: want a finite fraction ≥ 0", tolerance), exitInvalid}
	}
	return nil
}

// rule is the choice rule the flags ask for: a tolerance of 0 on the
// command line means none at all.
func rule(maxShare, tolerance float64) decision.Rule {
	if tolerance == 0 {
		tolerance = -1
	}
	return decision.Rule{MaxShare: maxShare, Tolerance: tolerance}
}

// Run prints the decision first, then each service's arithmetic line by
// line, the workload's demand, and the verifying sweep with its verdict
// (pipeline.Recommend).
func (c *RecommendCmd) Run() error {
	sc, err := openScenario(c.Scenario)
	if err != nil {
		return err
	}
	if err := checkDecisionFlags(int(c.Seeds), c.Headroom, c.MaxShare, c.Tolerance); err != nil {
		return err
	}
	if c.Emit != "" && c.NoVerify {
		return codedError{fmt.Errorf("--emit prints the verified settings; drop --no-verify"), exitInvalid}
	}
	out, tty := console(c.Stdout, nil)
	ctx, stop := interruptible(c.parent)
	defer stop()
	o := pipeline.RecommendOptions{NoVerify: c.NoVerify, JSON: c.JSON, Emit: c.Emit, Out: out,
		Decision: decision.Options{Strategy: c.Strategy, Headroom: c.Headroom, Rule: rule(c.MaxShare, c.Tolerance), Seeds: int(c.Seeds), Seed: c.Seed, Duration: c.Duration.D(),
			Progress: c.progress, Cache: c.open(os.Stderr), Parallel: c.Parallel, NoEarlyStop: c.NoStop}}
	if tty && !c.JSON && c.Emit == "" {
		o.Bars = decisionBarsOn(out)
	}
	return exitOf(pipeline.Recommend(ctx, sc, o))
}

// decisionBarsOn shows a decision's steps as progress bars on out.
func decisionBarsOn(out io.Writer) func() (pipeline.StepsFunc, func()) {
	return func() (pipeline.StepsFunc, func()) {
		bars := newDecisionBars(out)
		return bars.stage, bars.wait
	}
}
