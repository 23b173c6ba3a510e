package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

func TestValidateOK(t *testing.T) {
	var out bytes.Buffer
	cmd := ValidateCmd{Scenarios: []string{"tier3", "burst-8.toml", "scenarios/cancel.toml"}, Out: &out}
	if err := cmd.Run(); err != nil {
		t.Fatalf("Run = %v", err)
	}
	want := "tier3: ok\nburst-8.toml: ok\nscenarios/cancel.toml: ok\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestValidateInvalid(t *testing.T) {
	var out bytes.Buffer
	cmd := ValidateCmd{
		Scenarios: []string{"tier3", "scenarios/testdata/negative-rate.toml", "tier4"},
		Out:       &out,
	}
	err := cmd.Run()
	want := `tier3: ok
scenarios/testdata/negative-rate.toml:10:1: services.s.rps: "-10/s" is negative; a rate must be greater than 0
scenarios/testdata/negative-rate.toml:11:1: services.s.tpm: is -1000/m; a rate must be greater than 0 (leave the key out for no limit)
tier4: scenarios: "tier4" is neither a file nor a built-in scenario; the built-ins are `
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("output:\n%s\nwant it to start with:\n%s", out.String(), want)
	}
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != 2 || exitCode(err) != 2 {
		t.Fatalf("Run = %v; want an error with exit code 2", err)
	}
	if err.Error() != "2 of 3 scenarios are invalid" {
		t.Errorf("error = %q", err)
	}
}

// TestValidateParse checks that kong accepts the command's tags and fills
// the arguments.
func TestValidateParse(t *testing.T) {
	var cli struct {
		Validate ValidateCmd `cmd:""`
	}
	parser, err := kong.New(&cli)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse([]string{"validate", "a.toml", "tier3"}); err != nil {
		t.Fatal(err)
	}
	if got := cli.Validate.Scenarios; len(got) != 2 || got[0] != "a.toml" || got[1] != "tier3" {
		t.Errorf("Scenarios = %q", got)
	}
	if _, err := parser.Parse([]string{"validate"}); err == nil {
		t.Error("validate with no argument parsed; want an error asking for one")
	}
}

// TestValidateExitCodeThroughKong runs the command the way main does, so the
// exit code survives kong's wrapping of the command's error.
func TestValidateExitCodeThroughKong(t *testing.T) {
	var cli struct {
		Validate ValidateCmd `cmd:""`
	}
	var out bytes.Buffer
	cli.Validate.Out = &out
	parser, err := kong.New(&cli)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := parser.Parse([]string{"validate", "scenarios/testdata/p95-below-p50.toml"})
	if err != nil {
		t.Fatal(err)
	}
	if code := exitCode(ctx.Run()); code != 2 {
		t.Errorf("exit code %d, want 2; output:\n%s", code, out.String())
	}
}

// Every file of the hostile corpus is invalid input: validate exits 2 and
// names the file, and run refuses it the same way before simulating.
func TestHostileCorpusIsExit2(t *testing.T) {
	files, err := filepath.Glob("scenarios/testdata/hostile/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no hostile corpus: %v", err)
	}
	for _, f := range files {
		var out bytes.Buffer
		err := (&ValidateCmd{Scenarios: []string{f}, Out: &out}).Run()
		var ec interface{ ExitCode() int }
		if !errors.As(err, &ec) || ec.ExitCode() != exitInvalid || !strings.Contains(out.String()+err.Error(), filepath.Base(f)) {
			t.Errorf("validate %s: err %v, output %q; want exit %d naming the file", f, err, out.String(), exitInvalid)
		}
		err = (&RunCmd{Scenario: f, Out: t.TempDir(), NoReports: true, Stdout: &bytes.Buffer{}}).Run()
		if !errors.As(err, &ec) || ec.ExitCode() != exitInvalid {
			t.Errorf("run %s: err %v, want exit %d", f, err, exitInvalid)
		}
	}
}
