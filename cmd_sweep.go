package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// SweepCmd runs one strategy over a range of caps and shows where more
// concurrency stops paying.
type SweepCmd struct {
	Scenario string        `arg:"" name:"file|name" predictor:"scenario" help:"A scenario file, or the name of a built-in scenario."`
	Cap      string        `default:"1..64" help:"Caps to try: A..B doubles from A to B, A..B/S steps by S, or a list A,B,C."`
	Strategy string        `short:"s" placeholder:"NAME" help:"The strategy to vary (default: the scenario's first bounded strategy)."`
	By       string        `placeholder:"sessions=10,20,40" help:"Cross the caps with loads: sessions=N,… or arrival_rate=R,… (turns/s)."`
	MaxShare float64       `default:"0.001" env:"SIMBENCH_MAX_SHARE" help:"Largest share of 429s (429s ÷ attempts) the chosen cap may have."`
	Duration time.Duration `placeholder:"10m" env:"SIMBENCH_DURATION" help:"Replace the scenario's (virtual) duration."`
	Out      string        `short:"o" placeholder:"DIR" env:"SIMBENCH_OUT" help:"Where the sweep's plots and sweep.json go (default: out/<scenario>-sweep)."`
	Seed     *uint64       `env:"SIMBENCH_SEED" help:"Replace the scenario's seed."`
	JSON     bool          `help:"Print the sweep as JSON instead of the table."`
	Stdout   io.Writer     `kong:"-"`
}

// sweepOut is what `sweep --json` prints and sweep.json holds.
type sweepOut struct {
	Scenario string             `json:"scenario"`
	Strategy string             `json:"strategy"`
	Rows     []reports.SweepRow `json:"rows"`
	Chosen   map[string]int     `json:"chosen_cap"` // by load
	Knee     map[string]int     `json:"knee"`       // by load
}

// Run sweeps, prints a table per load with the knee and the chosen cap
// marked, and writes the sweep plots.
func (c *SweepCmd) Run() error {
	sc, err := openScenario(c.Scenario)
	if err != nil {
		return err
	}
	caps, err := sim.ParseCaps(c.Cap)
	if err != nil {
		return codedError{err, exitInvalid}
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
	ctx, stop := interruptible(nil)
	defer stop()

	opts := sim.Options{Duration: c.Duration}
	var bar *sweepBar
	if tty && !c.JSON {
		applied, _ := opts.Apply(sc)
		bar = newSweepBar(out, len(caps)*max(1, len(loads)), applied.Duration)
		opts.Progress = bar.update
	}
	rows, err := sim.Sweep(ctx, sc, strategy, caps, loads, opts)
	if bar != nil {
		bar.finish(err != nil)
	}
	if err != nil {
		if ctx.Err() != nil {
			return codedError{fmt.Errorf("interrupted"), exitInterrupted}
		}
		return err
	}
	res := sweepOut{Scenario: sc.Name, Strategy: strategy, Chosen: map[string]int{}, Knee: map[string]int{}}
	for _, row := range rows {
		var points []reports.SweepPoint
		for i, s := range row.Results {
			points = append(points, reports.SweepPointOf(caps[i], s))
		}
		r := reports.NewSweepRow(row.Load.String(), points, c.MaxShare)
		if r.Chosen > 0 {
			res.Chosen[r.Load] = r.Chosen
		}
		if r.Knee > 0 {
			res.Knee[r.Load] = r.Knee
		}
		res.Rows = append(res.Rows, r)
	}
	dir := c.Out
	if dir == "" {
		dir = filepath.Join("out", sc.Name+"-sweep")
	}
	if err := writeSweep(dir, sc, strategy, rows, &res); err != nil {
		return err
	}
	if c.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	if err := reports.WriteSweep(out, fmt.Sprintf("sweep of %s · strategy %s", sc.Name, strategy), res.Rows, c.MaxShare); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nplots and sweep.json: %s\n", dir)
	return nil
}

// writeSweep writes sweep.json and the plots of the first load's sweep.
func writeSweep(dir string, sc *scenarios.Scenario, strategy string, rows []sim.SweepRow, res *sweepOut) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := reports.WriteFileAtomic(filepath.Join(dir, "sweep.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	r := &sim.Results{Scenario: sc.Name, Description: sc.Description, Seed: sc.Seed, SimbenchVersion: sim.Version,
		DurationS: sc.Duration.Seconds(), Mode: "virtual", Strategies: rows[0].Results}
	_, err = reports.WritePlots(dir, r, reports.Options{Sweep: res.Rows[0].Points, SweepStrategy: strategy})
	return err
}
