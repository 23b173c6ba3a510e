package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/results"
)

func TestCompareDirsAndFiles(t *testing.T) {
	old, nw := fixtureRun(t, "tier3"), fixtureRun(t, "tier3-later")
	tests := []struct {
		name     string
		old, new string
	}{
		{"directories", old, nw},
		{"files", filepath.Join(old, "results.json"), filepath.Join(nw, "results.json")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := (&CompareCmd{Old: tt.old, New: tt.new, Stdout: &out}).Run(); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				"unbounded   429s        13,730  15,210  +1,480   +10.8%  worse",
				"            p95 ms       1,540   1,390    -150    -9.7%  better",
				"only in new: bounded-16",
				"8 better, 1 worse",
			} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

func TestCompareMissingRunIsExitCode2(t *testing.T) {
	err := (&CompareCmd{Old: fixtureRun(t, "tier3"), New: filepath.Join(t.TempDir(), "nope"), Stdout: &bytes.Buffer{}}).Run()
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != exitInvalid {
		t.Errorf("error %v, want exit code %d", err, exitInvalid)
	}
}

// compareCLI runs simbench compare with args as main would and returns
// the exit code and what it printed.
func compareCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	stdout = captureStdout(t, func() { code, _, stderr = cli(append([]string{"compare"}, args...)...) })
	return code, stdout, stderr
}

// seededRun runs tier3's bounded-64 (and with all, every strategy) for 2
// virtual minutes over seeds seed … seed+n−1, from the built-in file with
// its cap replaced by maxInFlight, and returns the run's directory.
func seededRun(t *testing.T, maxInFlight int, seed uint64, n int, all ...bool) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("scenarios", "tier3.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "max_in_flight = 64", "max_in_flight = "+strconv.Itoa(maxInFlight), 1)
	dir := t.TempDir()
	file := filepath.Join(dir, "tier3.toml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	cmd := &RunCmd{Scenario: file, Strategy: []string{"bounded-64"}, Seed: &seed, Seeds: seedCount(n), Duration: positiveDuration(2 * time.Minute),
		Out: out, NoReports: true, NoRecommend: true, Stdout: &bytes.Buffer{}}
	if len(all) > 0 && all[0] {
		cmd.Strategy = nil
	}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The same three seeds a side, the cap cut from 64 to 56: every seed's p95
// moves by more than 5%, compare calls it worse, and --fail-on worse exits
// 1 after printing the comparison. Without --fail-on it exits 0.
func TestCompareSameSeedsCountsACapChange(t *testing.T) {
	old, nw := seededRun(t, 64, 42, 3), seededRun(t, 56, 42, 3)
	a, err := results.Read(old)
	if err != nil {
		t.Fatal(err)
	}
	b, err := results.Read(nw)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Strategies[0].SeedRuns {
		o, n := a.Strategies[0].SeedRuns[i].TurnLatencyMs.P95, b.Strategies[0].SeedRuns[i].TurnLatencyMs.P95
		if n < 1.05*o {
			t.Fatalf("seed %d: p95 %v → %v ms, less than 5%%: the test's premise fails", a.Seeds[i], o, n)
		}
	}
	code, stdout, stderr := compareCLI(t, old, nw, "--fail-on", "worse")
	if code != exitFailure || !strings.Contains(stderr, "worse (--fail-on worse)") {
		t.Errorf("exit %d, stderr %q; want %d naming the worse count", code, stderr, exitFailure)
	}
	if !regexp.MustCompile(`p95 ms .*worse`).MatchString(stdout) || !strings.Contains(stdout, "same seeds 42–44 on both sides") {
		t.Errorf("p95 not worse:\n%s", stdout)
	}
	if code, _, _ := compareCLI(t, old, nw); code != 0 {
		t.Errorf("without --fail-on: exit %d, want 0", code)
	}
}

// Two different seeds a side: too few to tell a 5% change from the seeds'
// spread, so the p95 is undecided, with the seeds a side that would
// decide it — the number judge.SeedsNeeded computes from these runs.
func TestCompareTwoSeedsASideIsUndecided(t *testing.T) {
	old, nw := seededRun(t, 64, 42, 2), seededRun(t, 64, 100, 2)
	a, _ := results.Read(old)
	b, _ := results.Read(nw)
	var p95 *reports.Change
	changes := reports.Changes(a, b, reports.CompareOptions{})
	for i := range changes {
		if changes[i].Metric == "p95 ms" {
			p95 = &changes[i]
		}
	}
	if p95 == nil || p95.Verdict != reports.Undecided || p95.SeedsNeeded <= 2 {
		t.Fatalf("p95 change %+v; want undecided, needing more than 2 seeds", p95)
	}
	code, stdout, _ := compareCLI(t, old, nw, "--fail-on", "worse,undecided")
	want := "undecided: needs ≥ " + strconv.Itoa(p95.SeedsNeeded) + " seeds a side"
	if code != exitFailure || !regexp.MustCompile(`p95 ms .*`+want).MatchString(stdout) {
		t.Errorf("exit %d; want %d and the p95 row saying %q:\n%s", code, exitFailure, want, stdout)
	}
}

func TestCompareBadFlagsAreExitCode2(t *testing.T) {
	dir := fixtureRun(t, "tier3")
	for _, args := range [][]string{
		{"compare", dir, dir, "--fail-on", "better"},
		{"compare", dir, dir, "--min-effect", "-1"},
	} {
		if code, _, stderr := cli(args...); code != exitInvalid {
			t.Errorf("%v: exit %d (%s), want %d", args, code, stderr, exitInvalid)
		}
	}
}
