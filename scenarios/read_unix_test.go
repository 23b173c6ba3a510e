//go:build unix

package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFIFOIsRefused: a named pipe as the scenario, or as its empirical
// file, made loading hang for ever waiting for a writer.
func TestFIFOIsRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.toml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	_, err := Load(fifo)
	want := "scenarios: " + fifo + " is a named pipe (FIFO), not a regular file; give the path of a scenario file"
	if err == nil || err.Error() != want {
		t.Errorf("Load(FIFO) = %v\nwant %s", err, want)
	}

	path := filepath.Join(dir, "uses-pipe.toml")
	src := `duration = "1m"
[workload]
sessions = 1
calls = [ { tool = "t" } ]
[services.s]
latency = { dist = "empirical", file = "pipe.toml" }
[tools.t]
service = "s"
[[strategy]]
name = "a"
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	want = path + `:6:33: services.s.latency.file: cannot read "pipe.toml": it is a named pipe (FIFO), not a regular file; point file at a text file of values, one per line`
	if err == nil || err.Error() != want {
		t.Errorf("Load = %v\nwant %s", err, want)
	}
	if _, err := Load(fifo); err == nil || !strings.Contains(err.Error(), fifo) {
		t.Errorf("the error does not name the FIFO: %v", err)
	}
}

// TestReadRegularRefusesAFIFOOpenedLate checks the second line of defence:
// a FIFO opened without the Stat check first (as if swapped in between)
// does not block, and is refused once open.
func TestReadRegularRefusesAFIFOOpenedLate(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := regular(fi); err == nil || err.Error() != "a named pipe (FIFO), not a regular file" {
		t.Errorf("regular(open FIFO) = %v", err)
	}
}
