package check

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// goneBound is how long a test waits for a process to be gone: far past
// CommandGrace, so that only a process nobody ends reaches it.
const goneBound = 60 * time.Second

// running reports whether process pid runs (a zombie, exited but not yet
// collected by its new parent, does not).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	state, _, ok := procStat(pid)
	return !ok || state != 'Z'
}

// waitGone polls pid until it no longer runs; it fails the test (and
// kills the process) past goneBound.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(goneBound); running(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d, started by the client's shell, still runs %v after RunCommand returned", pid, goneBound)
		}
	}
}

// readPid waits for the pid a client writes to file.
func readPid(t *testing.T, file string) int {
	t.Helper()
	for deadline := time.Now().Add(goneBound); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(file)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && strings.HasSuffix(string(b), "\n") {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client wrote no pid to %s: %q %v", file, b, err)
		}
	}
}

func TestRunCommandEndsWhatTheClientsShellLeftRunning(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pid")
	var out bytes.Buffer
	// the grandchild holds the output pipe, as a server started by npm would
	err := RunCommand(context.Background(), []string{"sh", "-c", `sleep 300 & echo $! > "$PIDFILE"; echo started`},
		[]string{"PIDFILE=" + file}, &out, &out)
	if err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if out.String() != "started\n" {
		t.Errorf("the client's output %q, want started", out.String())
	}
	waitGone(t, readPid(t, file))
}

func TestRunCommandStoppedByItsContextEndsTheClientsChildren(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- RunCommand(ctx, []string{"sh", "-c", `sleep 300 & echo $! > "$PIDFILE"; wait`},
			[]string{"PIDFILE=" + file}, new(bytes.Buffer), new(bytes.Buffer))
	}()
	pid := readPid(t, file)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("a command stopped by its context: %v, want nil", err)
	}
	waitGone(t, pid)
}
