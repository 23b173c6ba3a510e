package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
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

// goFile is a Go source path the documentation names, such as
// `sim/runparts.go` or `live/livemember.go`.
var goFile = regexp.MustCompile(`\b[a-z0-9_]+(?:/[a-z0-9_]+)*/[a-z0-9_]+\.go\b`)

// TestDocsNameFilesThatExist: every Go file the documentation names by its
// path (from the repository's root, or from the page's own folder) exists,
// so a page does not send a reader to a file that moved.
func TestDocsNameFilesThatExist(t *testing.T) {
	named := 0
	for _, path := range docFiles(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			for _, f := range goFile.FindAllString(line, -1) {
				named++
				if _, err := os.Stat(f); err == nil {
					continue
				}
				if _, err := os.Stat(filepath.Join(filepath.Dir(path), f)); err == nil {
					continue
				}
				t.Errorf("%s:%d names %s, which does not exist", path, i+1, f)
			}
		}
	}
	if named < 5 {
		t.Fatalf("the documentation names only %d Go files: is goFile right?", named)
	}
}
