package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The reproducers of issue 11's loader items, one test each. They use only
// the package's public API, so that they also run against the loader before
// the fix, where each failed: by memory, by size of output, or by reading a
// device without end.

// TestNestedArraysLoadInBoundedMemory: 40 KB of nested arrays took the
// position index 628 MiB, one full key path per level.
func TestNestedArraysLoadInBoundedMemory(t *testing.T) {
	src := "a = " + strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000) + "\n"
	var err error
	alloc := allocated(func() { _, err = Parse("nested.toml", []byte(src)) })
	if err == nil || !strings.Contains(err.Error(), "nested.toml:1:") {
		t.Errorf("Parse = %v; want a problem at line 1", err)
	}
	if alloc > 16<<20 {
		t.Errorf("Parse allocated %d MiB for %d bytes; want under 16 MiB", alloc>>20, len(src))
	}
}

// TestNestedTablesLoadInBoundedMemory: 12 KB of nested inline tables took
// the TOML parser 1 GiB, its cost per key growing with the square of the
// depth.
func TestNestedTablesLoadInBoundedMemory(t *testing.T) {
	src := "a = " + strings.Repeat("{b=", 3000) + "1" + strings.Repeat("}", 3000) + "\n"
	var err error
	alloc := allocated(func() { _, err = Parse("tables.toml", []byte(src)) })
	if err == nil || !strings.Contains(err.Error(), "tables.toml:1:") {
		t.Errorf("Parse = %v; want a problem at line 1", err)
	}
	if alloc > 16<<20 {
		t.Errorf("Parse allocated %d MiB for %d bytes; want under 16 MiB", alloc>>20, len(src))
	}
}

// TestDeviceIsRefused: `validate /dev/zero` read gigabytes.
func TestDeviceIsRefused(t *testing.T) {
	if _, err := os.Stat(os.DevNull); err != nil {
		t.Skip("no null device here")
	}
	_, err := Load(os.DevNull)
	want := "scenarios: " + os.DevNull + " is a device, not a regular file; give the path of a scenario file"
	if err == nil || err.Error() != want {
		t.Errorf("Load(%s) = %v\nwant %s", os.DevNull, err, want)
	}
}

// TestDirectoryIsRefused: a directory is not a scenario either.
func TestDirectoryIsRefused(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(dir)
	want := "scenarios: " + dir + " is a directory, not a file; give the path of a scenario file"
	if err == nil || err.Error() != want {
		t.Errorf("Load(dir) = %v\nwant %s", err, want)
	}
}

// TestEmpiricalSymlinkOutsideIsRefused: an empirical file that is a
// symbolic link to /dev/zero inside the scenario's directory passed the ..
// check and exhausted memory. A link that stays inside still works.
func TestEmpiricalSymlinkOutsideIsRefused(t *testing.T) {
	outside := t.TempDir()
	dir := t.TempDir()
	values := []byte("100ms\n200ms\n")
	for _, f := range []string{filepath.Join(outside, "values.txt"), filepath.Join(dir, "values.txt")} {
		if err := os.WriteFile(f, values, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"inside.txt":  filepath.Join(dir, "values.txt"),
		"outside.txt": filepath.Join(outside, "values.txt"),
		"zero.txt":    "/dev/zero",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Skipf("cannot make symbolic links here: %v", err)
		}
	}
	scenario := func(file string) string {
		return fmt.Sprintf(`duration = "1m"
[workload]
sessions = 1
calls = [ { tool = "t" } ]
[services.s]
latency = { dist = "empirical", file = %q }
[tools.t]
service = "s"
[[strategy]]
name = "a"
`, file)
	}
	tests := []struct {
		give, wantErr string
	}{
		{give: "inside.txt"},
		{give: "outside.txt", wantErr: `services.s.latency.file: cannot read "outside.txt": it resolves through a symbolic link to ` + filepath.Join(outside, "values.txt") + `, outside the scenario's directory; copy the file into the directory`},
		{give: "zero.txt", wantErr: `services.s.latency.file: cannot read "zero.txt": it resolves through a symbolic link to /dev/zero, outside the scenario's directory; copy the file into the directory`},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, strings.TrimSuffix(tt.give, ".txt")+".toml")
		if err := os.WriteFile(path, []byte(scenario(tt.give)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.give, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), path+":6:") || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v\nwant %s at line 6", tt.give, err, tt.wantErr)
		}
	}
}

// TestUnknownToolReferencesAreCheap: 3,000 references to unknown tools
// among 3,000 tools took 55 s, an edit distance to every tool for every
// reference, and each problem listed all 3,000 tools.
func TestUnknownToolReferencesAreCheap(t *testing.T) {
	var b strings.Builder
	b.WriteString("duration = \"1m\"\n[services.s]\n[[strategy]]\nname = \"a\"\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "[tools.tool%04d]\nservice = \"s\"\n", i)
	}
	b.WriteString("[workload]\nsessions = 1\ncalls = [\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "  { tool = \"tool%04dx\" },\n", i) // one letter off: every tool is a near miss
	}
	b.WriteString("]\n")
	var err error
	alloc := allocated(func() { _, err = Parse("unknown.toml", []byte(b.String())) })
	var e *Error
	if !errors.As(err, &e) || len(e.Problems) != 3000 {
		t.Fatalf("Parse = %.300v; want 3000 problems", err)
	}
	want := `unknown tool "tool0000x"; did you mean "tool0000"?`
	if got := e.Problems[0].Message; got != want {
		t.Errorf("first problem: %s\nwant %s", got, want)
	}
	for _, p := range e.Problems {
		if len(p.Message) > 300 {
			t.Fatalf("a problem of %d bytes: %.300s…", len(p.Message), p.Message)
		}
	}
	if alloc > 64<<20 {
		t.Errorf("Parse allocated %d MiB; want under 64 MiB", alloc>>20)
	}
}
