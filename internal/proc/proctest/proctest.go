// Package proctest waits, in tests, for a pid that a client's shell
// writes to a file and for that process to be gone: how the tests of check
// and of the check command see that no process a client started outlives
// it.
package proctest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/proc"
)

// GoneBound is how long WaitGone and ReadPid wait: far past
// check.CommandGrace, so that only a process nobody ends reaches it.
const GoneBound = 60 * time.Second

// WaitGone polls pid until it no longer runs (proc.Running); past
// GoneBound it kills the process and fails the test.
func WaitGone(t testing.TB, pid int) {
	t.Helper()
	for deadline := time.Now().Add(GoneBound); proc.Running(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d, started by the client's shell, still runs %v after the client was ended", pid, GoneBound)
		}
	}
}

// ReadPid waits for the pid, ended by a newline, that a client writes to
// file, and returns it; past GoneBound it fails the test.
func ReadPid(t testing.TB, file string) int {
	t.Helper()
	for deadline := time.Now().Add(GoneBound); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(file)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && strings.HasSuffix(string(b), "\n") {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client wrote no pid to %s: %q %v", file, b, err)
		}
	}
}
