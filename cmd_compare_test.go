package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
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
