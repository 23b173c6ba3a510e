package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/redistest"
	"github.com/simbench/simbench/results"
)

// The process flags describe a live run: without --live they are invalid
// input (exit 2), saying which flags go together.
func TestRunProcessesNeedLive(t *testing.T) {
	cmd := &RunCmd{Scenario: "burst-8", Processes: 2, Quota: "shared", Out: t.TempDir(), NoReports: true, Stdout: &bytes.Buffer{}}
	err := cmd.Run()
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != exitInvalid || !strings.Contains(err.Error(), "go with --live") {
		t.Fatalf("err = %v, want exit %d saying they go with --live", err, exitInvalid)
	}
}

// run --live --processes 2 --quota shared starts its own redis-server from
// PATH and two simbench worker processes (this test binary, running as
// simbench: see TestMain), and writes each process's figures to results.json: its own
// calls and attempts, adding up to the fleet's, and the provider's peak in
// flight.
func TestRunLiveProcessesShared(t *testing.T) {
	redistest.Start(t) // skips (fails under CI=true) without redis-server
	dir := t.TempDir()
	cmd := bounded(t, &RunCmd{Scenario: "burst-8", Strategy: []string{"paced"}, Duration: positiveDuration(20 * time.Second), Live: true, TimeScale: 0.05,
		Processes: 2, Shares: []float64{2, 1}, Quota: "shared", AllowInvalid: true, Out: dir, NoReports: true, NoRecommend: true, Stdout: &bytes.Buffer{}})
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	res, err := results.Read(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	ps := res.Strategies[0].Processes
	if len(ps) != 2 || ps[0].Name != "p1" || ps[1].Share <= 0 || ps[0].Share <= ps[1].Share {
		t.Fatalf("processes %+v, want p1 and p2 with shares 2:1", ps)
	}
	st := res.Strategies[0]
	if c, a := ps[0].Calls+ps[1].Calls, ps[0].Attempts+ps[1].Attempts; c != st.Calls || a != st.Attempts || ps[1].Calls == 0 || ps[1].Attempts < ps[1].Calls {
		t.Errorf("processes' calls %d and attempts %d (rows %+v), the fleet's %d and %d: want each its own, adding up", c, a, ps, st.Calls, st.Attempts)
	}
	// The provider counted the fleet's peak in flight: a measurement, not
	// the members' summed bound.
	for svc, n := range st.PeakInFlight {
		if st.PeakInFlightBound || n <= 0 {
			t.Errorf("peak in flight at %s: %d (a bound: %v), want the provider's count", svc, n, st.PeakInFlightBound)
		}
	}
}
