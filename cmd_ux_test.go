package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
)

// parseAndRun runs simbench with args as the command line would, and
// returns the error the command ended with.
func parseAndRun(t *testing.T, args ...string) error {
	t.Helper()
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("simbench"), kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	kctx, err := parser.Parse(args)
	if err == nil {
		err = kctx.Run()
	}
	return err
}

// --seeds 0 is refused by every command that takes seeds, as invalid
// input with a message that says what is wanted; run used to take it as
// "not set".
func TestSeedsZeroRefusedEverywhere(t *testing.T) {
	for _, cmd := range []string{"run", "sweep", "recommend"} {
		err := parseAndRun(t, cmd, "burst-8", "--seeds", "0", "--duration", "1s", "--out", t.TempDir())
		var pe *kong.ParseError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), "want at least 1 seed") {
			t.Errorf("%s --seeds 0: %v, want a parse error (exit %d) saying at least 1 seed", cmd, err, exitInvalid)
		}
	}
	t.Setenv("SIMBENCH_SEEDS", "0")
	if err := parseAndRun(t, "run", "burst-8", "--duration", "1s", "--out", t.TempDir()); err == nil || !strings.Contains(err.Error(), "want at least 1 seed") {
		t.Errorf("SIMBENCH_SEEDS=0 run: %v, want refused", err)
	}
}

// A --cap range says what it expands to, since A..B doubles.
func TestCapRangeSaysWhatItRuns(t *testing.T) {
	tests := []struct{ give, want string }{
		{"1..8", "--cap 1..8 runs the caps 1, 2, 4, 8 (A..B doubles from A; 1..8/1 runs every cap)"},
		{"2..9/3", "--cap 2..9/3 runs the caps 2, 5, 8, 9\n"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		cmd := &SweepCmd{Scenario: "burst-8", Cap: tt.give, Seeds: 1, MaxShare: 0.001, Tolerance: 0.05, Duration: positiveDuration(5 * time.Second),
			Out: t.TempDir(), cacheFlags: cacheFlags{NoCache: true}, Stdout: &out, Stderr: &errOut}
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("--cap %s: standard error %q, want %q", tt.give, errOut.String(), tt.want)
		}
	}
}
