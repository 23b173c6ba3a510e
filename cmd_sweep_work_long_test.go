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
	"github.com/simbench/simbench/internal/sweepwork"
)

// Four worker processes of the tier3 and the multi-agent decision sweeps
// at the scenarios' own durations, one killed with SIGKILL while it holds
// a lease, write the sweep.json of the sweep in one process, byte for
// byte, in one launch: the dead worker's run is taken by another once its
// lease (2 s here) expires.
func TestLongSweepWorkKilled(t *testing.T) {
	for _, name := range []string{"tier3", "multi-agent"} {
		t.Run(name, func(t *testing.T) { checkWorkKilled(t, name) })
	}
}

func checkWorkKilled(t *testing.T, scenario string) {
	rs := redistest.Start(t)
	c := &SweepCmd{Scenario: scenario, Seeds: 3, MaxShare: 0.001, Tolerance: 0.05, Out: t.TempDir(), Stdout: &bytes.Buffer{}, cacheFlags: cacheFlags{NoCache: true}}
	whole := wholeSweep(t, c)
	root := t.TempDir()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := range 4 {
		cmd := exec.Command(os.Args[0], "sweep", scenario, "--seeds", "3", "--max-share", "0.001", "--tolerance", "0.05", "--no-cache",
			"--work", rs.URL(), "--lease", "2s", "--out", filepath.Join(root, fmt.Sprint(i)))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	// Kill worker 1 once it holds a lease: its name in the lease holds
	// its process ID.
	done1 := make(chan error, 1)
	go func() { done1 <- cmds[1].Wait() }()
	client := redistest.Client(t, rs.URL())
	mark := fmt.Sprintf("-%d-", cmds[1].Process.Pid)
	var held string
	for held == "" {
		keys, err := client.Keys(t.Context(), sweepwork.KeyPrefix+"*:lease:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if v, _ := client.Get(t.Context(), k).Result(); strings.Contains(v, mark) {
				held = k
			}
		}
		select {
		case err := <-done1:
			t.Fatalf("worker 1 ended (%v) before it held a lease\n%s", err, outs[1])
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := cmds[1].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-done1
	for i, cmd := range cmds {
		if i == 1 {
			continue
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("worker %d after worker 1 was killed: %v\n%s", i, err, outs[i])
		}
		got, err := os.ReadFile(filepath.Join(root, fmt.Sprint(i), "sweep.json"))
		if err != nil || !bytes.Equal(got, whole) {
			t.Errorf("worker %d: its sweep.json (%v) differs from the sweep's in one process\n%s", i, err, outs[i])
		}
	}
	run := strings.TrimPrefix(held[strings.LastIndex(held, ":lease:"):], ":lease:")
	stored, err := client.HExists(t.Context(), held[:strings.LastIndex(held, ":lease:")]+":runs", run).Result()
	if err != nil || !stored {
		t.Errorf("the run the killed worker held (%s) is not stored: %v", run, err)
	}
	t.Logf("worker 1 killed holding %s", run)
}
