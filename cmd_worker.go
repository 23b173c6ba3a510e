package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/simbench/simbench/gate"
	"github.com/simbench/simbench/live"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

// WorkerCmd runs one member of a live fleet whose members are processes of
// their own, on this host or others.
type WorkerCmd struct {
	Scenario      string           `arg:"" name:"file|name" predictor:"scenario" help:"A scenario file, or the name of a built-in scenario (every member runs the same)."`
	Member        memberFlag       `required:"" placeholder:"I/N" help:"Run member I (0-based) of N: its share of the sessions (or of the open-model turns). The Kubernetes Indexed Job's index is I: --member $(JOB_COMPLETION_INDEX)/N."`
	BaseURL       string           `required:"" placeholder:"URL" env:"SIMBENCH_BASE_URL" help:"The provider: the URL 'simbench serve' of the same scenario prints (one address, each service under /NAME)."`
	Redis         string           `required:"" placeholder:"URL" env:"SIMBENCH_REDIS" help:"The redis:// URL of the server the members meet at before each strategy and, in quota mode shared, share the quota through."`
	Out           string           `required:"" placeholder:"DIR" help:"Write this member's results.json and histograms.hlog here; 'simbench report --merge' combines the members' folders."`
	Rendezvous    string           `placeholder:"URL" help:"The redis:// URL of the server the members meet at, when not --redis's (a run whose quota Redis is gone, with --redis-fallback)."`
	RunID         string           `placeholder:"ID" env:"SIMBENCH_RUN_ID" help:"Tell this fleet's rendezvous from another's on the same Redis (default: from the scenario, its seed and N; give each concurrent run of the same scenario its own)."`
	Wait          positiveDuration `default:"5m" help:"How long to wait at the rendezvous for the other members."`
	Strategy      []string         `short:"s" sep:"," placeholder:"NAME" help:"Run only these strategies, comma-separated, one after another (default: all); every member must be given the same."`
	Seed          *uint64          `env:"SIMBENCH_SEED" help:"Replace the scenario's seed (the same for every member)."`
	Duration      positiveDuration `placeholder:"10m" env:"SIMBENCH_DURATION" help:"Replace the scenario's duration."`
	TimeScale     float64          `default:"1" placeholder:"F" env:"SIMBENCH_TIME_SCALE" help:"Multiply every duration by F and divide every rate by F, the same on every member and at the provider: keep 1 against 'simbench serve', which plays the scenario in its own time."`
	Shares        []float64        `sep:"," placeholder:"W,..." help:"Each member's share of the load, one weight per member, the same on every member (default: the scenario's workload.process_shares when it has N, else even)."`
	Quota         string           `placeholder:"MODE" help:"full, split or shared (one quota in Redis), for every strategy (default: each strategy's quota.mode, else full)."`
	RedisFallback bool             `help:"In quota mode shared, when Redis is lost, run on a local share (limit÷N) and do not mark the run invalid."`
	AllowInvalid  bool             `help:"Exit 0 even when a strategy's run is invalid (the machine could not keep its timing, or the provider did not answer over HTTP); it is still marked invalid. Without it such a run exits 3."`
	Stdout        io.Writer        `kong:"-"` // nil: os.Stdout

	ctx context.Context // tests: a context they cancel (nil: Ctrl-C's)
}

// memberFlag is --member I/N.
type memberFlag struct{ I, N int }

// Decode reads I/N: 0 ≤ I < N.
func (m *memberFlag) Decode(ctx *kong.DecodeContext) error {
	var s string
	if err := ctx.Scan.PopValueInto("member", &s); err != nil {
		return err
	}
	v, err := parseMember(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// parseMember reads I/N (0 ≤ I < N).
func parseMember(s string) (memberFlag, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return memberFlag{}, fmt.Errorf("%q: want I/N with 0 ≤ I < N, such as 0/3", s)
	}
	return memberFlag{i, n}, nil
}

// Run runs the member, writes DIR/results.json and DIR/histograms.hlog
// after each strategy (the strategies still to run listed as missing),
// and prints one line per strategy. Ctrl-C writes what was measured
// (marked partial) and exits 130; a rendezvous the others did not reach
// writes what was measured before it and exits 1; a run marked invalid
// exits 3 unless --allow-invalid.
func (c *WorkerCmd) Run() error {
	sc, err := openScenario(c.Scenario)
	if err != nil {
		return err
	}
	out := c.Stdout
	if out == nil {
		out = os.Stdout
	}
	opts := live.MemberOptions{
		LiveOptions: live.LiveOptions{Options: sim.Options{Strategies: c.Strategy, Seed: c.Seed, Duration: c.Duration.D(), Version: simbenchVersion()},
			TimeScale: c.TimeScale, Shares: c.Shares, Quota: live.QuotaMode(c.Quota), Redis: c.Redis, AllowRedisFallback: c.RedisFallback},
		Member: c.Member.I, Of: c.Member.N, BaseURL: c.BaseURL, Rendezvous: c.Rendezvous, RunID: c.RunID, Wait: c.Wait.D(),
		// After each strategy: a member killed later leaves these behind.
		Checkpoint: func(m *live.Member) error { return live.WriteMember(c.Out, m) },
	}
	// One signal only: a member a run started gets the terminal's Ctrl-C
	// and the run's own interrupt, which must not read as a second one
	// (it would exit without writing what the member measured).
	ctx, stop := interruptibleOnce(c.ctx)
	defer stop()
	m, runErr := live.RunMember(ctx, sc, opts)
	if m == nil {
		if errors.Is(runErr, live.ErrBadLiveOption) {
			return codedError{runErr, exitInvalid}
		}
		return runErr
	}
	if err := live.WriteMember(c.Out, m); err != nil {
		return err
	}
	for _, st := range m.Results.Strategies {
		fmt.Fprintf(out, "member %d/%d %s: %d turns, %d calls, %d attempts, %d 429s\n", c.Member.I, c.Member.N, st.Name, st.Turns, st.Calls, st.Attempts, st.RateLimited)
	}
	if f := m.Results.Fleet; len(f.Missing) > 0 {
		fmt.Fprintf(out, "member %d/%d did not run: %s\n", c.Member.I, c.Member.N, strings.Join(f.Missing, ", "))
	}
	fmt.Fprintf(out, "results: %s\n", filepath.Join(c.Out, results.ResultsFile))
	if runErr != nil {
		if ctx.Err() != nil {
			return codedError{fmt.Errorf("interrupted: wrote what was measured to %s", c.Out), exitInterrupted}
		}
		return fmt.Errorf("%w (what was measured before is in %s)", runErr, c.Out)
	}
	if err := gate.CheckValid(m.Results); err != nil && !c.AllowInvalid {
		return codedError{err, exitInvalidRun}
	}
	return nil
}
