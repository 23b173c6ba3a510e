package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simbench/simbench/scenarios"
)

func TestScenariosList(t *testing.T) {
	var out bytes.Buffer
	if err := (&ScenariosCmd{Out: &out}).Run(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	list := scenarios.List()
	if len(lines) != len(list) || len(list) == 0 {
		t.Fatalf("%d lines for %d scenarios:\n%s", len(lines), len(list), out.String())
	}
	// Descriptions start in one column, two spaces past the longest name.
	width := 0
	for _, info := range list {
		width = max(width, len(info.Name))
	}
	for i, info := range list {
		want := info.Name + strings.Repeat(" ", width+2-len(info.Name)) + info.Description
		if lines[i] != want {
			t.Errorf("line %d = %q, want %q", i, lines[i], want)
		}
	}
	if !strings.HasPrefix(lines[len(lines)-1], "tier3  ") {
		t.Errorf("last line %q; want tier3, sorted last", lines[len(lines)-1])
	}
}
