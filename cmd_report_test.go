package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/results"
)

// fixtureRun copies the reports package's tier3 results into a fresh run
// directory and returns it.
func fixtureRun(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("reports", "testdata", name, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReportRendersFromResults(t *testing.T) {
	t.Parallel() // minutes under the race detector: share the cores with the other slow ones
	dir := fixtureRun(t, "tier3")
	sweep := filepath.Join(t.TempDir(), "sweep.json")
	if err := os.WriteFile(sweep, []byte(`[{"cap":8,"p50_ms":980,"p95_ms":1540,"goodput_per_s":89},
		{"cap":16,"p50_ms":890,"p95_ms":1310,"goodput_per_s":121},
		{"cap":32,"p50_ms":860,"p95_ms":1220,"goodput_per_s":142,"rate_limited_share":0.0004}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := &ReportCmd{Dir: dir, RateLimit: 166.67, Sweep: sweep, MaxRateLimited: 0.001, Color: "auto", Stdout: &out}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.html", "report.md", "latency-cdf.png", "latency-cdf.svg", "requests.png", "sweep.png", "sweep.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "<td>32</td><td>860</td>") {
		t.Error("report.html lacks the sweep given with --sweep")
	}
	for _, want := range []string{"bounded-8", "1,540*", "llm: Little's-law cap 64", "wrote 12 files in " + dir} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "\x1b[") {
		t.Error("colour in output that is not a terminal")
	}
}

func TestReportAcceptsResultsFile(t *testing.T) {
	t.Parallel() // minutes under the race detector: share the cores with the other slow ones
	dir := fixtureRun(t, "tier3")
	// Any name: the file given is the one read.
	if err := os.Rename(filepath.Join(dir, "results.json"), filepath.Join(dir, "run-42.json")); err != nil {
		t.Fatal(err)
	}
	cmd := &ReportCmd{Dir: filepath.Join(dir, "run-42.json"), Color: "never", Stdout: &bytes.Buffer{}}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.md")); err != nil {
		t.Error(err)
	}
}

func TestReportColor(t *testing.T) {
	tests := []struct {
		give     string
		terminal bool
		noColor  string
		want     bool
	}{
		{"always", false, "", true},
		{"never", true, "", false},
		{"auto", true, "", true},
		{"auto", false, "", false},
		{"auto", true, "1", false}, // NO_COLOR wins over a terminal
	}
	for _, tt := range tests {
		t.Setenv("NO_COLOR", tt.noColor)
		cmd := &ReportCmd{Color: tt.give, Stdout: &bytes.Buffer{}, isTerminal: func() bool { return tt.terminal }}
		if got := cmd.colored(); got != tt.want {
			t.Errorf("--color=%s, terminal %v, NO_COLOR=%q: colour %v, want %v", tt.give, tt.terminal, tt.noColor, got, tt.want)
		}
	}
}

func TestReportBadInputIsExitCode2(t *testing.T) {
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "results.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	badSweep := filepath.Join(t.TempDir(), "sweep.json")
	if err := os.WriteFile(badSweep, []byte(`{"cap": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		give ReportCmd
	}{
		{"missing directory", ReportCmd{Dir: filepath.Join(t.TempDir(), "nope")}},
		{"directory without results", ReportCmd{Dir: t.TempDir()}},
		{"bad JSON", ReportCmd{Dir: bad}},
		{"bad sweep", ReportCmd{Dir: fixtureRun(t, "tier3"), Sweep: badSweep}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.give.Stdout = &bytes.Buffer{}
			err := tt.give.Run()
			var ec interface{ ExitCode() int }
			if !errors.As(err, &ec) || ec.ExitCode() != exitInvalid {
				t.Errorf("error %v, want exit code %d", err, exitInvalid)
			}
		})
	}
}

// svgs reads every SVG in dir, by name.
func svgs(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.svg"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = data
	}
	return out
}

// copyOnly copies the named file of dir into a fresh directory.
func copyOnly(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	cp := t.TempDir()
	if err := os.WriteFile(filepath.Join(cp, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return cp
}

// sameSVGs fails unless got holds exactly the SVGs of want, byte for byte.
func sameSVGs(t *testing.T, want, got map[string][]byte) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("no SVGs written")
	}
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: not re-rendered", name)
		case !bytes.Equal(w, g):
			t.Errorf("%s: re-rendered from the JSON, it differs from the original", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: re-rendered, but the original run did not write it", name)
		}
	}
}

// Everything a figure draws is in results.json: `report` on a copy of it
// redraws a scenario's SVGs byte for byte, the limit lines included,
// without flags.
func TestReportRoundTripsOneScenario(t *testing.T) {
	t.Parallel() // minutes under the race detector: share the cores with the other slow ones
	reportRoundTrip(t, "mixed-read-write")
}

// reportRoundTrip runs scenario for five virtual seconds, then reports on
// a copy of its results.json alone, and fails unless every SVG comes out
// byte for byte the same. TestReportRoundTripsOneScenario checks one
// scenario; the long checks (TestLongReportRoundTripsEveryScenario) check
// every built-in, which under the race detector takes minutes.
func reportRoundTrip(t *testing.T, scenario string) {
	t.Helper()
	dir := t.TempDir()
	run := &RunCmd{Scenario: scenario, Duration: positiveDuration(5 * time.Second), Out: dir, NoRecommend: true, Stdout: &bytes.Buffer{}}
	if err := run.Run(); err != nil {
		t.Fatal(err)
	}
	cp := copyOnly(t, dir, "results.json")
	rep := &ReportCmd{Dir: cp, MaxRateLimited: 0.001, Color: "never", Stdout: &bytes.Buffer{}}
	if err := rep.Run(); err != nil {
		t.Fatal(err)
	}
	sameSVGs(t, svgs(t, dir), svgs(t, cp))
}

// sweep.json holds everything the sweep plot draws, every load included:
// `report` on a copy of a sweep's directory redraws it byte for byte, and
// `report RUN --sweep sweep.json` plots it beside a run.
func TestReportRoundTripsSweep(t *testing.T) {
	t.Parallel() // minutes under the race detector: share the cores with the other slow ones
	dir := t.TempDir()
	sw := &SweepCmd{Scenario: "tier3", Cap: "4..32", By: "sessions=10,40", MaxShare: 0.001, Duration: positiveDuration(20 * time.Second), Seeds: 1, Out: dir, Stdout: &bytes.Buffer{}}
	if err := sw.Run(); err != nil {
		t.Fatal(err)
	}
	want := svgs(t, dir)
	if _, ok := want["sweep.svg"]; !ok || len(want) != 1 {
		t.Fatalf("the sweep wrote %d SVGs, want sweep.svg alone", len(want))
	}
	for _, load := range []string{"sessions=10", "sessions=40"} {
		if !bytes.Contains(want["sweep.svg"], []byte(load)) {
			t.Errorf("sweep.svg does not label the load %s", load)
		}
	}
	cp := copyOnly(t, dir, results.SweepFile)
	var out bytes.Buffer
	if err := (&ReportCmd{Dir: cp, MaxRateLimited: 0.5, Color: "never", Stdout: &out}).Run(); err != nil {
		t.Fatal(err)
	}
	sameSVGs(t, want, svgs(t, cp))

	// The sweep beside a run's results, named with --sweep.
	run := fixtureRun(t, "tier3")
	rep := &ReportCmd{Dir: run, Sweep: filepath.Join(dir, results.SweepFile), MaxRateLimited: 0.5, Color: "never", Stdout: &bytes.Buffer{}}
	if err := rep.Run(); err != nil {
		t.Fatal(err)
	}
	got := svgs(t, run)
	if !bytes.Equal(got["sweep.svg"], want["sweep.svg"]) {
		t.Error("report RUN --sweep sweep.json draws another sweep plot than the sweep did")
	}
	html, err := os.ReadFile(filepath.Join(run, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "load: sessions=40") {
		t.Error("report.html lacks the second load's sweep table")
	}
}
