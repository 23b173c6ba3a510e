package mdcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "other.md"), []byte("# Other page\n\n## `[thresholds]`\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "README.md")
	tests := []struct {
		name string
		give string
		want []string // substrings of the problems, in order; none: clean
	}{
		{"closed fences", "# A\n\n```sh\nrun\n```\n\n~~~~\nx\n~~~~\n\ntext\n", nil},
		{"unclosed fence", "# A\n\ntext\n\n```promql\nsum(x)\n\n## Regression gate\n\nmore\n", []string{":5: a ``` code block is never closed", ":8: a code block holds \"## Regression gate\""}},
		// The README as it was: the promql block left open takes the next
		// block's opening fence as its close, so that block's closing fence
		// opens a block that runs to the end.
		{"unclosed fence before a closed one", "```promql\nsum(x)\n\n## Regression gate\n\nCI runs it:\n\n```\ntable\n```\n\nHow to read it.\n", []string{
			":4: a code block holds \"## Regression gate\"", ":10: a ``` code block is never closed"}},
		{"a comment in a code block is no heading", "```sh\n## build it\nmake\n```\n", nil},
		{"closed by a shorter fence is not closed", "````\ncode\n```\n", []string{":1: a ``` code block"}},
		{"closed by the other character is not closed", "```\ncode\n~~~\n", []string{":1: a ``` code block"}},
		{"empty unclosed fence at the end", "text\n\n```go\n", []string{":3: a ``` code block"}},
		{"fence in a list item", "- item\n\n  ```sh\n  run\n  ```\n", nil},
		{"links that resolve", "# Top\n\nSee [other](other.md), [its section](other.md#thresholds), [top](#top), [web](https://example.com/x) and <https://example.com>.\n", nil},
		{"a missing file", "# Top\n\nSee [gone](gone.md).\n", []string{":3: link gone.md: "}},
		{"a missing anchor here", "# Top\n\nSee [there](#nowhere).\n", []string{"link #nowhere: no heading"}},
		{"a missing anchor there", "# Top\n\nSee [there](other.md#nowhere).\n", []string{"link other.md#nowhere: no heading"}},
		{"a missing image", "![plot](plot.png)\n", []string{"image plot.png"}},
		{"a link inside code is no link", "```\n[gone](gone.md)\n```\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Check(path, []byte(tt.give))
			if len(got) != len(tt.want) {
				t.Fatalf("problems %v, want %d like %q", got, len(tt.want), tt.want)
			}
			for i, p := range got {
				if !strings.Contains(p.String(), tt.want[i]) {
					t.Errorf("problem %q, want one containing %q", p, tt.want[i])
				}
			}
		})
	}
}

func TestAnchors(t *testing.T) {
	got := Anchors([]byte("# simbench\n## Two commands\n## A fleet of Runners behind one API key\n### `[workload]`\n## Notes\n## Notes\n## Keys that depend on each other\n"))
	for _, want := range []string{"simbench", "two-commands", "a-fleet-of-runners-behind-one-api-key", "workload", "notes", "notes-1", "keys-that-depend-on-each-other"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
}
