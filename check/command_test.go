package check

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/simbench/simbench/internal/proc/proctest"
)

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
	proctest.WaitGone(t, proctest.ReadPid(t, file))
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
	pid := proctest.ReadPid(t, file)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("a command stopped by its context: %v, want nil", err)
	}
	proctest.WaitGone(t, pid)
}
