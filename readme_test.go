package main

import (
	"path/filepath"
	"testing"

	"github.com/simbench/simbench/internal/mdcheck"
)

// docFiles returns the repository's Markdown documentation: the READMEs and
// every page under docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no docs/*.md: run the tests from the repository's root")
	}
	return append([]string{"README.md", "scenarios/README.md", "trace/README.md", "examples/README.md"}, pages...)
}

// The documentation parses as CommonMark with every fenced block closed and
// every relative link and anchor reaching its target (internal/mdcheck).
func TestReadmesRender(t *testing.T) {
	for _, path := range docFiles(t) {
		problems, err := mdcheck.CheckFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Error(p)
		}
	}
}
