package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/sim"
)

// SweepCmd runs one strategy over a range of caps and shows where more
// concurrency stops paying.
type SweepCmd struct {
	Scenario  string           `arg:"" name:"file|name" predictor:"scenario" help:"A scenario file, or the name of a built-in scenario."`
	Cap       string           `placeholder:"1..64" help:"Caps to try: A..B doubles from A to B, A..B/S steps by S, or a list A,B,C (default: recommend's range around the arithmetic's cap, extended while the choice sits at an edge)."`
	Strategy  string           `short:"s" placeholder:"NAME" help:"The strategy to vary (default: the one the scenario marks with recommend = true, else its first with a cap above 1)."`
	By        string           `placeholder:"sessions=10,20,40" help:"Cross the caps with loads: sessions=N,… or arrival_rate=R,… (turns/s)."`
	MaxShare  float64          `default:"0.001" env:"SIMBENCH_MAX_SHARE" help:"Largest share of 429s (429s ÷ attempts) the chosen cap may have."`
	Tolerance float64          `default:"0.05" env:"SIMBENCH_TOLERANCE" help:"Take the smallest cap whose p95 time to answer is within this fraction of the best."`
	Seeds     int              `default:"3" env:"SIMBENCH_SEEDS" help:"Seeds each cap is simulated with; figures are means with 95% intervals."`
	Seed      *uint64          `env:"SIMBENCH_SEED" help:"Replace the scenario's seed (the first of --seeds)."`
	Duration  positiveDuration `placeholder:"10m" env:"SIMBENCH_DURATION" help:"Replace the scenario's (virtual) duration."`
	Out       string           `short:"o" placeholder:"DIR" env:"SIMBENCH_OUT" help:"Where the sweep's plots and sweep.json go (default: out/<scenario>-sweep)."`
	JSON      bool             `help:"Print the sweep as JSON instead of the table."`
	Stdout    io.Writer        `kong:"-"`
}

// sweepOut is what `sweep --json` prints and sweep.json holds.
type sweepOut struct {
	Scenario string             `json:"scenario"`
	Strategy string             `json:"strategy"`
	Decision *sim.Decision      `json:"decision,omitempty"`
	Seeds    []uint64           `json:"seeds,omitempty"`
	Rows     []reports.SweepRow `json:"rows"`
	// MaxShare is the 429 share the chosen caps could have (the sweep
	// plot's threshold line).
	MaxShare float64        `json:"max_rate_limited_share"`
	Chosen   map[string]int `json:"chosen_cap"` // by load
	Knee     map[string]int `json:"knee"`       // by load
}

// Run sweeps, prints a table per load with the knee and the chosen cap
// marked, and writes the sweep plots.
func (c *SweepCmd) Run() error {
	sc, err := openScenario(c.Scenario)
	if err != nil {
		return err
	}
	if err := checkDecisionFlags(c.Seeds, 0, c.MaxShare, c.Tolerance); err != nil {
		return err
	}
	var caps []int
	if c.Cap != "" {
		if caps, err = sim.ParseCaps(c.Cap); err != nil {
			return codedError{err, exitInvalid}
		}
	}
	var loads []sim.Load
	if c.By != "" {
		if loads, err = sim.ParseLoads(c.By); err != nil {
			return codedError{err, exitInvalid}
		}
	}
	strategy := c.Strategy
	if strategy == "" {
		strategy = sim.SweepStrategy(sc)
	}
	if sc.Strategy(strategy) == nil {
		_, err := (&sim.Options{Strategies: []string{strategy}}).Apply(sc)
		return codedError{err, exitInvalid}
	}
	out, tty := console(c.Stdout, nil)
	ctx, stop := interruptible(context.Background())
	defer stop()
	interrupted := func(err error) error {
		if ctx.Err() != nil {
			return codedError{fmt.Errorf("interrupted"), exitInterrupted}
		}
		return err
	}
	r := rule(c.MaxShare, c.Tolerance)
	res := sweepOut{Scenario: sc.Name, Strategy: strategy, MaxShare: c.MaxShare, Chosen: map[string]int{}, Knee: map[string]int{}}
	opts := sim.Options{Duration: c.Duration.D(), Seed: c.Seed, Seeds: c.Seeds}
	var rows []sim.SweepRow
	if caps == nil {
		// recommend's range: decide, and show the decision's own sweep.
		d, err := decision.Decide(ctx, sc, decision.Options{Strategy: c.Strategy, Rule: r, Seeds: c.Seeds, Seed: c.Seed, Duration: c.Duration.D()})
		if err != nil {
			return interrupted(err)
		}
		res.Decision, res.Strategy = &d.Decision, d.Decision.Strategy
		res.Rows = append(res.Rows, d.Row)
		caps = d.Decision.Evidence.Caps
	}
	if len(loads) > 0 || res.Decision == nil {
		var bar *sweepBar
		if tty && !c.JSON {
			applied, _ := opts.Apply(sc)
			bar = newSweepBar(out, len(caps)*max(1, len(loads))*c.Seeds, applied.Duration)
			opts.Progress = bar.update
		}
		rows, err = sim.Sweep(ctx, sc, strategy, caps, loads, opts)
		if bar != nil {
			bar.finish(err != nil)
		}
		if err != nil {
			return interrupted(err)
		}
		res.Rows = nil
		for _, row := range rows {
			var points []reports.SweepPoint
			for i, s := range row.Results {
				points = append(points, reports.SweepPointOf(caps[i], s))
			}
			res.Rows = append(res.Rows, reports.NewSweepRow(row.Load.String(), points, r))
		}
	}
	applied, _ := opts.Apply(sc)
	res.Seeds = sim.Seeds(applied.Seed, c.Seeds)
	for _, row := range res.Rows {
		if row.Chosen > 0 {
			res.Chosen[row.Load] = row.Chosen
		}
		if row.Knee > 0 {
			res.Knee[row.Load] = row.Knee
		}
	}
	dir := c.Out
	if dir == "" {
		dir = filepath.Join("out", sc.Name+"-sweep")
	}
	if err := writeSweep(dir, &res); err != nil {
		return err
	}
	if c.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	if res.Decision != nil {
		for _, line := range reports.DecisionLines(res.Decision) {
			fmt.Fprintln(out, line)
		}
		fmt.Fprintln(out)
	}
	title := fmt.Sprintf("sweep of %s · strategy %s as written · %s", sc.Name, strategy, seedsText(c.Seeds))
	if res.Decision != nil && len(loads) == 0 {
		title = fmt.Sprintf("sweep of %s · strategy %s paced at headroom %s · %s · %s", sc.Name, res.Strategy, fmtFloat(res.Decision.Headroom), res.Decision.Knob, seedsText(c.Seeds))
	}
	if err := reports.WriteSweep(out, title, res.Rows, r); err != nil {
		return err
	}
	if res.Decision == nil {
		fmt.Fprintln(out, "\nthe caps and strategy are as given; `simbench recommend` decides what to set over its own range")
	}
	fmt.Fprintf(out, "\nplots and sweep.json: %s\n", dir)
	return nil
}

// writeSweep writes sweep.json and the sweep plot, one line per load.
// sweep.json holds everything the plot draws, so `simbench report DIR`
// re-renders it byte for byte.
func writeSweep(dir string, res *sweepOut) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := reports.WriteFileAtomic(filepath.Join(dir, SweepFile), append(data, '\n'), 0o644); err != nil {
		return err
	}
	_, err = reports.WritePlots(dir, &sim.Results{Scenario: res.Scenario}, reports.Options{
		Sweep: res.Rows, SweepStrategy: res.Strategy, MaxRateLimitedShare: res.MaxShare,
	})
	return err
}
