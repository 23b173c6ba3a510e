//go:build long

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/redistest"
	"github.com/simbench/simbench/results"
)

// TestLongWorkerKilledInFirstOfTwoStrategies kills one of three members
// with SIGKILL during the first of two strategies. The other two finish
// it, meet at the second strategy's rendezvous without the dead member
// (which met at the first and whose liveness key then expired), run it and
// exit 0; report --merge writes both strategies from the two, names the
// dead member for each, and exits 1. Before, the two waited out the
// rendezvous (5 minutes by default), exited 1 without writing anything,
// and the merge found no member results. Slow (the dead member's liveness
// outlives it by up to 10 s), so behind the long tag.
func TestLongWorkerKilledInFirstOfTwoStrategies(t *testing.T) {
	rs := redistest.Start(t)
	_, base := startProvider(t)
	root := t.TempDir()
	const runID = "kill-two-test"
	var dirs []string
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := range 3 {
		dir := filepath.Join(root, fmt.Sprintf("host%d", i))
		cmd := exec.Command(os.Args[0], "worker", fleetScenario, "--member", fmt.Sprintf("%d/3", i), "--base-url", base,
			"--redis", rs.URL(), "--out", dir, "--run-id", runID, "-s", "full,shared", "--duration", "4s", "--allow-invalid")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		dirs, cmds, outs = append(dirs, dir), append(cmds, cmd), append(outs, &out)
	}
	waitStarted(t, rs.URL(), runID, "full")
	time.Sleep(time.Second) // into the first strategy: not a threshold, only where the kill lands
	if err := cmds[1].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for i, cmd := range cmds {
		err := cmd.Wait()
		if i != 1 && err != nil {
			t.Fatalf("member %d after member 1 was killed: %v\n%s", i, err, outs[i])
		}
	}
	out := filepath.Join(root, "merged")
	code, stdout, stderr := cli("report", "--merge", dirs[0], dirs[1], dirs[2], "--out", out)
	if code != exitFailure || !strings.Contains(stderr, "member 1 (p2)") {
		t.Fatalf("exit %d, stderr %q: want 1 naming member 1 (p2)\n%s", code, stderr, stdout)
	}
	res, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Strategies) != 2 {
		t.Fatalf("%d strategies merged, want full and shared", len(res.Strategies))
	}
	for _, st := range res.Strategies {
		var attempts int64
		for _, d := range []string{dirs[0], dirs[2]} {
			m, err := results.Read(d)
			if err != nil {
				t.Fatal(err)
			}
			if s := m.Strategy(st.Name); s != nil {
				attempts += s.Attempts
			}
		}
		if len(st.Processes) != 2 || st.Processes[0].Name != "p1" || st.Processes[1].Name != "p3" || st.Attempts != attempts || attempts == 0 {
			t.Errorf("strategy %s: merged %d attempts over %+v, want p1 and p3 with their %d", st.Name, st.Attempts, st.Processes, attempts)
		}
	}
	if !res.Partial || !strings.Contains(res.Invalid, "member 1 (p2)") {
		t.Errorf("partial %v, invalid %q: want the dead member named", res.Partial, res.Invalid)
	}
}
