package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// RecommendCmd computes the concurrency cap each service's limits allow and
// verifies it by simulation.
type RecommendCmd struct {
	Scenario string        `arg:"" name:"file|name" predictor:"scenario" help:"A scenario file, or the name of a built-in scenario."`
	Headroom float64       `default:"0.7" env:"SIMBENCH_HEADROOM" help:"Fraction of the binding limit to plan for; the rest is kept for retries."`
	Strategy string        `short:"s" placeholder:"NAME" help:"The strategy whose cap the sweep varies (default: the scenario's first bounded strategy)."`
	MaxShare float64       `default:"0.001" env:"SIMBENCH_MAX_SHARE" help:"Largest share of 429s (429s ÷ attempts) the verified cap may have."`
	Duration time.Duration `placeholder:"10m" env:"SIMBENCH_DURATION" help:"Replace the scenario's (virtual) duration for the verifying sweep."`
	Seed     *uint64       `env:"SIMBENCH_SEED" help:"Replace the scenario's seed for the verifying sweep."`
	NoVerify bool          `help:"Print the arithmetic only; skip the verifying sweep."`
	JSON     bool          `help:"Print the recommendation as JSON."`
	Stdout   io.Writer     `kong:"-"`
}

// recommendOut is what `recommend --json` prints.
type recommendOut struct {
	Scenario       string                        `json:"scenario"`
	Recommendation map[string]sim.Recommendation `json:"recommendation"`
	Arithmetic     map[string][]string           `json:"arithmetic"`
	Overall        *reports.Overall              `json:"overall,omitempty"`
	OverallLines   []string                      `json:"overall_arithmetic,omitempty"`
	Load           *reports.LoadCheck            `json:"load,omitempty"`
	LoadLines      []string                      `json:"load_arithmetic,omitempty"`
	Sweep          *reports.SweepRow             `json:"sweep,omitempty"`
	Strategy       string                        `json:"strategy,omitempty"`
	Verdict        string                        `json:"verdict,omitempty"`
}

// Run prints each service's arithmetic line by line, then sweeps caps
// around the computed one and reports the cap the simulation supports,
// explaining any disagreement.
func (c *RecommendCmd) Run() error {
	sc, err := openScenario(c.Scenario)
	if err != nil {
		return err
	}
	out := c.Stdout
	if out == nil {
		out = os.Stdout
	}
	headroom := c.Headroom
	if headroom == 0 {
		headroom = reports.DefaultHeadroom
	}
	if headroom < 0 || headroom > 1 {
		return codedError{fmt.Errorf("--headroom %g: want a fraction in (0, 1]", c.Headroom), exitInvalid}
	}
	res := recommendOut{Scenario: sc.Name, Recommendation: map[string]sim.Recommendation{}, Arithmetic: map[string][]string{}}
	plans, unplanned := planServices(sc, headroom)
	for name, err := range unplanned {
		res.Arithmetic[name] = []string{fmt.Sprintf("no recommendation: %v", err)}
	}
	for _, p := range plans {
		res.Recommendation[p.Service.Name] = p.Recommendation()
		res.Arithmetic[p.Service.Name] = p.Lines()
	}
	top := dominant(plans)
	if len(plans) > 1 {
		o, _ := reports.OverallOf(plans)
		res.Overall, res.OverallLines = &o, o.Lines(plans)
	}
	ctx, stop := interruptible(nil)
	defer stop()
	load, err := checkLoad(ctx, sc, sim.Options{Duration: c.Duration}, plans)
	if err != nil {
		if ctx.Err() != nil {
			return codedError{fmt.Errorf("interrupted"), exitInterrupted}
		}
		return codedError{err, exitInvalid}
	}
	if load != nil {
		res.Load, res.LoadLines = load, load.Lines()
	}
	if top != nil && !c.NoVerify {
		if err := c.verify(ctx, sc, top, &res); err != nil {
			return err
		}
	}
	if c.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	for _, name := range sortedKeys(res.Arithmetic) {
		fmt.Fprintf(out, "%s\n", name)
		for _, line := range res.Arithmetic[name] {
			fmt.Fprintf(out, "  %s\n", line)
		}
	}
	if len(res.OverallLines) > 0 {
		fmt.Fprintln(out, "overall")
		for _, line := range res.OverallLines {
			fmt.Fprintf(out, "  %s\n", line)
		}
	}
	if len(res.LoadLines) > 0 {
		fmt.Fprintln(out, "demand")
		for _, line := range res.LoadLines {
			fmt.Fprintf(out, "  %s\n", line)
		}
	}
	if res.Sweep != nil {
		fmt.Fprintf(out, "\nverified by simulation (strategy %s, %s):\n", res.Strategy, res.Sweep.Load)
		if err := reports.WriteSweep(out, "sweep of "+sc.Name+" · strategy "+res.Strategy, []reports.SweepRow{*res.Sweep}, c.MaxShare); err != nil {
			return err
		}
		fmt.Fprintf(out, "\n%s\n", res.Verdict)
	}
	return nil
}

// verify sweeps caps around the computed one for the service most calls go
// to, and says whether the simulation agrees.
func (c *RecommendCmd) verify(ctx context.Context, sc *scenarios.Scenario, plan *reports.Plan, res *recommendOut) error {
	strategy := c.Strategy
	if strategy == "" {
		strategy = sim.SweepStrategy(sc)
	}
	computed := plan.MaxInFlight
	caps := reports.CapsAround(computed)
	rows, err := sim.Sweep(ctx, sc, strategy, caps, nil, sim.Options{Duration: c.Duration})
	if err != nil {
		if ctx.Err() != nil {
			return codedError{fmt.Errorf("interrupted"), exitInterrupted}
		}
		return codedError{err, exitInvalid}
	}
	var points []reports.SweepPoint
	for i, s := range rows[0].Results {
		points = append(points, reports.SweepPointOf(caps[i], s))
	}
	row := reports.NewSweepRow("as written", points, c.MaxShare)
	res.Sweep, res.Strategy = &row, strategy
	res.Verdict = reports.Verdict(plan, points, row.Chosen, c.MaxShare, res.Load)
	name := plan.Service.Name
	rec := res.Recommendation[name]
	rec.VerifiedCap = row.Chosen
	res.Recommendation[name] = rec
	return nil
}
