package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// RecommendOptions are recommend's options: the decision and how it is
// printed.
type RecommendOptions struct {
	// Decision is the decision's options.
	Decision decision.Options
	// NoVerify keeps the arithmetic only, without the verifying sweep.
	NoVerify bool
	// JSON prints the recommendation as JSON; Emit, when "toml" or "go",
	// prints only the decided settings, as a [[strategy]] block or a
	// sched.Config literal.
	JSON bool
	Emit string
	// Out takes the recommendation.
	Out io.Writer
	// Bars, when set, shows the decision's steps.
	Bars func() (StepsFunc, func())
}

// Recommend decides what to set for sc and prints the decision first,
// then each service's arithmetic line by line, the workload's demand, and
// the verifying sweep with its verdict. On Ctrl-C (ctx ends) it prints the
// points the verifying sweep measured, marked partial, and returns an
// Interrupted error.
func Recommend(ctx context.Context, sc *scenarios.Scenario, o RecommendOptions) error {
	d, err := decide(ctx, sc, o.Decision, o.NoVerify, o.Bars)
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(o, sc.Name, d)
		}
		return err
	}
	out := o.Out
	switch o.Emit {
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
	if o.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return printRecommendation(out, &res, d, o.Decision.Rule)
}

// interrupted prints the points the verifying sweep measured before
// Ctrl-C, marked partial (as sweep.json's content with JSON), and
// returns the interrupt's error.
func interrupted(o RecommendOptions, scenario string, d *decision.Result) error {
	if d == nil || len(d.Row.Points) == 0 {
		return errorf(Interrupted, "interrupted before any cap was measured")
	}
	done := errorf(Interrupted, "interrupted: no decision; the points measured are printed, marked partial")
	r := o.Decision.Rule
	if o.JSON {
		sw := results.Sweep{Scenario: scenario, Strategy: d.Tuned.Name, Partial: true, Rows: []results.SweepRow{d.Row}, MaxShare: r.MaxShare}
		if err := writeJSON(o.Out, &sw); err != nil {
			return err
		}
		return done
	}
	if err := reports.WriteSweep(o.Out, partialTitle(scenario, d.Tuned.Name), []results.SweepRow{d.Row}, r.String(), r.MaxShare); err != nil {
		return err
	}
	return done
}

// printRecommendation shows the recommendation for a terminal: the
// decision, each service's arithmetic, the overall and demand lines, and
// the verifying sweep with its verdict.
func printRecommendation(out io.Writer, res *decision.Report, d *decision.Result, r decision.Rule) error {
	printDecision(out, res.Decision)
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
