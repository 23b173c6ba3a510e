package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/spec"
	"github.com/simbench/simbench/trace"
)

// writeAgentTrace writes a simbench trace of 10 sessions, each looping 20
// turns of 3 lookups (lognormal latency) and 1 cache read (bimodal: hits
// and misses), with think time between turns.
func writeAgentTrace(t *testing.T, path string) {
	t.Helper()
	w, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	if err := w.Header(trace.Header{Scenario: "agent", Strategy: "unbounded", Mode: "live", Limits: map[string]trace.Limits{"api": {RPM: 3000}}}); err != nil {
		t.Fatal(err)
	}
	turn := int64(0)
	for s := int64(1); s <= 10; s++ {
		now := rng.Float64()
		for range 20 {
			turn++
			end := now
			for c := range 4 {
				r := trace.Record{Session: s, Turn: turn, Call: fmt.Sprint(c), Service: "api", Tool: "lookup", Attempt: 1, Intended: now, Start: now, Outcome: trace.OutcomeSuccess, Status: 200, Tokens: 500}
				lat := 0.3 * math.Exp(0.4*rng.NormFloat64())
				if c == 3 {
					r.Service, r.Tool, r.Tokens = "cache", "read", 0
					lat = 0.005
					if rng.IntN(2) == 0 {
						lat = 1.5
					}
					lat *= math.Exp(0.05 * rng.NormFloat64())
				}
				r.End = now + lat
				end = max(end, r.End)
				if err := w.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			now = end + 2*math.Exp(0.5*rng.NormFloat64())
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCalibrateWritesScenarioThatRuns calibrates a trace, checks the
// files and the summary, and simulates the written scenario.
func TestCalibrateWritesScenarioThatRuns(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "agent.jsonl")
	writeAgentTrace(t, in)
	out := filepath.Join(dir, "agent.toml")
	var stdout bytes.Buffer
	cmd := &CalibrateCmd{Traces: []string{in}, Out: out, Format: "auto", Stdout: &stdout}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"read " + in + " (simbench): 800 attempts",
		"empirical (the lognormal fit is poor)",
		"workload: closed model, 10 sessions (10 seen, 20.0 turns each); 200 turns, 4.00 tool calls per turn (4 to 4)",
		filepath.Join(dir, "agent-cache-latency.txt"),
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	sc, err := scenarios.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Service("cache").Latency.Kind; got != spec.DistEmpirical {
		t.Errorf("cache latency %v, want empirical", got)
	}
	if got := sc.Service("api"); got.Latency.Kind != spec.DistLognormal || got.RequestsPerMinute != 3000 {
		t.Errorf("api: latency %v, rpm %v; want lognormal, 3000", got.Latency.Kind, got.RequestsPerMinute)
	}
	if len(sc.Strategies) != 3 || sc.Strategies[0].Name != "sequential" || sc.Strategies[1].Name != "unbounded" || !strings.HasPrefix(sc.Strategies[2].Name, "bounded-") {
		t.Errorf("strategies %+v", sc.Strategies)
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{Duration: 30 * time.Second, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Strategies {
		if s.Turns == 0 || s.Calls != 4*s.Turns {
			t.Errorf("strategy %s: %d turns, %d calls; want some turns of 4 calls", s.Name, s.Turns, s.Calls)
		}
	}
}

// TestCalibrateBadInput checks that bad traces and flags exit with code 2
// and say which file and line.
func TestCalibrateBadInput(t *testing.T) {
	dir := t.TempDir()
	file := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknown := file("access.log", "GET /search 200 12ms\n")
	empty := file("empty.jsonl", "")
	csvFile := file("calls.csv", "ts,latency,svc,code\n1,2,s,200\n")
	badLine := file("bad.jsonl", `{"service":"s","start":1,"end":2,"outcome":"success"}`+"\n"+`{"service":"s","start":1,"end":0.5,"outcome":"success"}`+"\n")
	tests := []struct {
		name string
		cmd  CalibrateCmd
		want string
	}{
		{"unknown format", CalibrateCmd{Traces: []string{unknown}}, unknown + ":1: unknown trace format"},
		{"empty trace", CalibrateCmd{Traces: []string{empty}}, empty + ": no attempts in the trace"},
		{"missing column", CalibrateCmd{Traces: []string{csvFile}, CSVColumns: "start=ts,latency_ms=dur,service=svc,status=code"}, csvFile + `:1: no column "dur"`},
		{"bad line", CalibrateCmd{Traces: []string{badLine}}, badLine + ":2: end 0.5 is before start 1"},
		{"no such file", CalibrateCmd{Traces: []string{filepath.Join(dir, "nope.jsonl")}}, "nope.jsonl: no such file"},
		{"bad mapping", CalibrateCmd{Traces: []string{csvFile}, CSVColumns: "begin=ts"}, `--csv-columns: unknown field "begin"`},
		{"bad ks", CalibrateCmd{Traces: []string{badLine}, KSMax: 2}, "--ks-max 2"},
		{"out not toml", CalibrateCmd{Traces: []string{badLine}, Out: "x.json"}, `--out "x.json"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := tt.cmd
			if cmd.Out == "" {
				cmd.Out = filepath.Join(dir, "out.toml")
			}
			cmd.Format, cmd.Stdout = "auto", &bytes.Buffer{}
			err := cmd.Run()
			if err == nil || !strings.Contains(err.Error(), tt.want) || exitCode(err) != exitInvalid {
				t.Errorf("Run = %v (exit %d); want exit %d and %q", err, exitCode(err), exitInvalid, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "out.toml")); !os.IsNotExist(err) {
		t.Errorf("a scenario was written from bad input: %v", err)
	}
}

// TestCalibrateThroughKong parses the command line as main does and
// checks that a bad trace's exit code survives kong's wrapping.
func TestCalibrateThroughKong(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "x.log")
	if err := os.WriteFile(bad, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var cli struct {
		Calibrate CalibrateCmd `cmd:""`
	}
	cli.Calibrate.Stdout = &bytes.Buffer{}
	parser, err := kong.New(&cli, decisionVars)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := parser.Parse([]string{"calibrate", bad, "--out", filepath.Join(dir, "s.toml"), "--csv-columns", "start=a,end=b,service=c,status=d", "--ks-max", "0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if c := cli.Calibrate; c.Format != "auto" || c.KSMax != 0.1 || len(c.Traces) != 1 {
		t.Errorf("parsed %+v", c)
	}
	if code := exitCode(ctx.Run()); code != exitInvalid {
		t.Errorf("exit code %d, want %d", code, exitInvalid)
	}
	for _, args := range [][]string{
		{"calibrate", bad},
		{"calibrate", bad, "--out", "s.toml", "--format", "zipkin"},
	} {
		var fresh struct {
			Calibrate CalibrateCmd `cmd:""`
		}
		if _, err := kong.Must(&fresh, decisionVars).Parse(args); err == nil {
			t.Errorf("%q parsed; want an error", args)
		}
	}
}
