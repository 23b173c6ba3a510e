package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/alecthomas/kong"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/results"
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
	JSON       bool             `help:"Print the recommendation as JSON."`
	Parallel   int              `env:"SIMBENCH_PARALLEL" help:"Runs simulated at once (default: the number of CPUs)."`
	cacheFlags `embed:""`
	Emit       string    `enum:",toml,go" default:"" placeholder:"toml|go" help:"Print only the decided settings: toml, a [[strategy]] block to paste into a scenario; go, the sched.Config literal."`
	Stdout     io.Writer `kong:"-"`

	parent   context.Context                                  // tests: a context to cancel in place of Ctrl-C
	progress func(strategy string, done, total time.Duration) // tests: follows the verifying sweep's runs
}

// decisionVars are the decision's defaults as kong variables, which the
// flags of run, sweep and recommend interpolate (default:"${tolerance}"),
// so that no command writes a default of the decision as a literal.
var decisionVars = kong.Vars{
	"max_share": fmtFloat(decision.DefaultMaxRateLimitedShare),
	"tolerance": fmtFloat(decision.DefaultTolerance),
	"seeds":     strconv.Itoa(decision.DefaultSeeds),
	"headroom":  fmtFloat(decision.DefaultHeadroom),
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
// line, the workload's demand, and the verifying sweep with its verdict.
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
	o := decision.Options{Strategy: c.Strategy, Headroom: c.Headroom, Rule: rule(c.MaxShare, c.Tolerance), Seeds: int(c.Seeds), Seed: c.Seed, Duration: c.Duration.D(),
		Progress: c.progress, Cache: c.open(os.Stderr), Parallel: c.Parallel}
	decide := decision.Decide
	if c.NoVerify {
		decide = decision.Arithmetic
	}
	var bars *decisionBars
	if tty && !c.JSON && c.Emit == "" {
		bars = newDecisionBars(out)
		o.Steps = bars.stage
	}
	d, err := decide(ctx, sc, o)
	if bars != nil {
		bars.wait()
	}
	if err != nil {
		if ctx.Err() != nil {
			return c.interrupted(out, sc.Name, d, o.Rule)
		}
		return err
	}
	switch c.Emit {
	case "toml":
		_, err := io.WriteString(out, decision.TOML(&d.Tuned))
		return err
	case "go":
		text, err := decision.Go(sc, &d.Tuned)
		if err != nil {
			return err
		}
		_, err = io.WriteString(out, text)
		return err
	}
	res := d.Report(sc.Name)
	if c.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return printRecommendation(out, &res, d, o.Rule)
}

// interrupted prints the points the verifying sweep measured before
// Ctrl-C, marked partial (as sweep.json's content with --json), and
// returns the interrupt's exit.
func (c *RecommendCmd) interrupted(out io.Writer, scenario string, d *decision.Result, r decision.Rule) error {
	if d == nil || len(d.Row.Points) == 0 {
		return codedError{fmt.Errorf("interrupted before any cap was measured"), exitInterrupted}
	}
	done := codedError{fmt.Errorf("interrupted: no decision; the points measured are printed, marked partial"), exitInterrupted}
	if c.JSON {
		sw := results.Sweep{Scenario: scenario, Strategy: d.Tuned.Name, Partial: true, Rows: []results.SweepRow{d.Row}, MaxShare: r.MaxShare}
		data, err := results.Encode(&sw)
		if err != nil {
			return err
		}
		if _, err := out.Write(data); err != nil {
			return err
		}
		return done
	}
	title := "PARTIAL (interrupted) sweep of " + scenario + " · strategy " + d.Tuned.Name + " · the caps measured before Ctrl-C, each over the seeds that finished"
	if err := reports.WriteSweep(out, title, []results.SweepRow{d.Row}, r.String(), r.MaxShare); err != nil {
		return err
	}
	return done
}

// printRecommendation shows the recommendation for a terminal: the
// decision, each service's arithmetic, the overall and demand lines, and
// the verifying sweep with its verdict.
func printRecommendation(out io.Writer, res *decision.Report, d *decision.Result, r decision.Rule) error {
	if res.Decision != nil {
		for _, line := range reports.DecisionLines(res.Decision) {
			fmt.Fprintln(out, line)
		}
		fmt.Fprintln(out)
	}
	for _, name := range slices.Sorted(maps.Keys(res.Arithmetic)) {
		fmt.Fprintf(out, "%s\n", name)
		for _, line := range res.Arithmetic[name] {
			fmt.Fprintf(out, "  %s\n", line)
		}
	}
	for _, sec := range []struct {
		title string
		lines []string
	}{{"overall", res.OverallLines}, {"demand", res.LoadLines}} {
		if len(sec.lines) > 0 {
			fmt.Fprintln(out, sec.title)
			for _, line := range sec.lines {
				fmt.Fprintf(out, "  %s\n", line)
			}
		}
	}
	if res.Sweep != nil {
		fmt.Fprintf(out, "\nverified by simulation (strategy %s paced at headroom %s, %s):\n", res.Strategy, fmtFloat(d.Decision.Headroom), seedsText(len(d.Decision.Evidence.Seeds)))
		if err := reports.WriteSweep(out, "sweep of "+res.Scenario+" · strategy "+res.Strategy+" · "+d.Decision.Knob, []results.SweepRow{*res.Sweep}, r.String(), r.MaxShare); err != nil {
			return err
		}
		if res.Verdict != "" {
			fmt.Fprintf(out, "\n%s\n", res.Verdict)
		}
	}
	if res.Decision != nil {
		// Again last: the arithmetic and the sweep have scrolled the
		// first off the screen.
		fmt.Fprintf(out, "\n%s\n", res.Decision.Sentence)
	}
	return nil
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func seedsText(n int) string {
	if n == 1 {
		return "1 seed"
	}
	return fmt.Sprintf("%d seeds", n)
}
