package main

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/redisproc"
	"github.com/simbench/simbench/results"
)

// Live flags no run can take are invalid input (exit 2) with a message
// naming what is wrong, refused before anything starts.
func TestRunLiveRejectsBadFlags(t *testing.T) {
	tests := []struct {
		name string
		cmd  RunCmd
		want string
	}{
		{"time scale too small", RunCmd{TimeScale: 1e-12}, "time scale 1e-12: want a number from 1e-06"},
		{"time scale NaN", RunCmd{TimeScale: math.NaN()}, "time scale NaN"},
		{"time scale too large", RunCmd{TimeScale: 1e12}, "time scale 1e+12"},
		{"time scale slower than life", RunCmd{TimeScale: 2}, "time scale 2: want a number from 1e-06 to 1;"},
		{"time scale negative", RunCmd{TimeScale: -1}, "time scale -1"},
		{"time scale zero", RunCmd{}, "--time-scale 0: want a number from 1e-06"},
		{"run shorter than 1 ms", RunCmd{TimeScale: 2e-6}, "want at least 1ms"},
		{"shares for other processes", RunCmd{TimeScale: 0.05, Processes: 3, Shares: []float64{1, 2}}, "2 shares for 3 processes"},
		{"a NaN share", RunCmd{TimeScale: 0.05, Processes: 2, Shares: []float64{math.NaN(), 1}}, "process share NaN"},
		{"an http URL", RunCmd{TimeScale: 0.05, Processes: 2, Quota: "shared", Redis: "http://127.0.0.1:6379"}, `Redis URL "http://127.0.0.1:6379": want redis://`},
		{"processes above the key's limit", RunCmd{TimeScale: 0.05, Processes: 20000}, "20000 processes: at most 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := tt.cmd
			cmd.Scenario, cmd.Live, cmd.Out, cmd.NoReports, cmd.NoRecommend, cmd.Stdout = "burst-8", true, t.TempDir(), true, true, &bytes.Buffer{}
			err := cmd.Run()
			if codeOf(err) != exitInvalid || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run() = %v (exit %d), want exit %d and %q", err, codeOf(err), exitInvalid, tt.want)
			}
		})
	}
}

// bounded sets c, a test's live run, to end within minutes and hold its
// heap to 1 GiB (--max-memory): a run that hangs is interrupted (exit
// 130), a failure in minutes rather than at go test's own limit. It
// returns c.
func bounded(t *testing.T, c *RunCmd) *RunCmd {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	c.parent, c.MaxMemory = ctx, 1<<30
	return c
}

// A live run at a time scale no machine keeps (burst-8's 5 minutes in 3 ms)
// begins a handful of turns where the virtual run begins over a hundred:
// the run is marked invalid, exit 3, with the turns compared. However late
// the machine runs it (each real second 100,000 of the scenario's), its
// timelines hold the scenario's 300 seconds, one bucket each, and one for
// its last instant.
func TestRunLiveTooFastIsInvalid(t *testing.T) {
	dir := t.TempDir()
	cmd := bounded(t, &RunCmd{Scenario: "burst-8", Live: true, TimeScale: 1e-5, Out: dir, NoReports: true, NoRecommend: true, Stdout: &bytes.Buffer{}})
	err := cmd.Run()
	if codeOf(err) != exitInvalidRun {
		t.Fatalf("Run() = %v (exit %d), want exit %d", err, codeOf(err), exitInvalidRun)
	}
	res, err := results.Read(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range res.Strategies {
		if !strings.Contains(st.Invalid, "turns begun") {
			t.Errorf("%s: invalid %q, want the turns begun compared", st.Name, st.Invalid)
		}
		if n := len(st.Timeline); n > 301 {
			t.Errorf("%s: a timeline of %d buckets for 300 s", st.Name, n)
		}
	}
}

// A shared quota whose --redis does not answer fails the run before it
// starts, naming the flag that allows the fallback; with --redis-fallback
// the run goes on, each process on its local share, and is not marked
// invalid for it.
func TestRunLiveUnreachableRedis(t *testing.T) {
	port, err := redisproc.FreePort() // free a moment ago: nothing answers there
	if err != nil {
		t.Fatal(err)
	}
	url := "redis://127.0.0.1:" + strconv.Itoa(port)
	base := RunCmd{Scenario: "burst-8", Strategy: []string{"paced"}, Duration: positiveDuration(10 * time.Second), Live: true, TimeScale: 0.05,
		Processes: 2, Quota: "shared", Redis: url, NoReports: true, NoRecommend: true, Stdout: &bytes.Buffer{}}
	bounded(t, &base)
	cmd := base
	cmd.Out = t.TempDir()
	// An uncoded error: main exits 1 (a failed run, not invalid input).
	if err := cmd.Run(); err == nil || codeOf(err) != -1 || !strings.Contains(err.Error(), "--redis-fallback") {
		t.Fatalf("Run() = %v (exit %d), want a failure naming --redis-fallback", err, codeOf(err))
	}
	cmd = base
	cmd.Out, cmd.RedisFallback, cmd.AllowInvalid = t.TempDir(), true, true
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	res, err := results.Read(filepath.Join(cmd.Out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	st := res.Strategies[0]
	if len(st.Processes) != 2 || st.Processes[0].QuotaFallbacks == 0 || strings.Contains(st.Invalid, "Redis") {
		t.Fatalf("processes %+v, invalid %q: want both on local shares, not invalid for it", st.Processes, st.Invalid)
	}
}
