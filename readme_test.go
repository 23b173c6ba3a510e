package main

import (
	"testing"

	"github.com/simbench/simbench/internal/mdcheck"
)

// The READMEs parse as CommonMark with every fenced block closed and every
// relative link and anchor reaching its target (internal/mdcheck).
func TestReadmesRender(t *testing.T) {
	for _, path := range []string{"README.md", "scenarios/README.md", "trace/README.md"} {
		problems, err := mdcheck.CheckFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Error(p)
		}
	}
}
