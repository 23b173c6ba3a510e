package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	for _, want := range []string{"bounded-8", "1,540*", "llm: Little's-law cap 64", "wrote 14 files in " + dir} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "\x1b[") {
		t.Error("colour in output that is not a terminal")
	}
}

func TestReportAcceptsResultsFile(t *testing.T) {
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
