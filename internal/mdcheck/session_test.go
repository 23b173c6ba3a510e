package mdcheck

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestFencedBlocksAndSession(t *testing.T) {
	src := "# t\n\n```toml file=a.toml\nx = 1\n```\n\ntext\n\n```console\n$ simbench validate a.toml 'b c'   # exits 2\na.toml: ok\n\n$ simbench scenarios\n⋯\n```\n"
	blocks := FencedBlocks([]byte(src))
	if len(blocks) != 2 {
		t.Fatalf("%d blocks, want 2", len(blocks))
	}
	if b := blocks[0]; b.Lang != "toml" || b.Attrs["file"] != "a.toml" || b.Line != 3 || b.Text != "x = 1\n" {
		t.Errorf("first block %+v", b)
	}
	cmds, err := Session(blocks[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 2 {
		t.Fatalf("%d commands, want 2", len(cmds))
	}
	c := cmds[0]
	if c.Line != 10 || c.Exit != 2 || !slices.Equal(c.Args, []string{"simbench", "validate", "a.toml", "b c"}) || !slices.Equal(c.Want, []string{"a.toml: ok", ""}) {
		t.Errorf("first command %+v", c)
	}
	if c := cmds[1]; c.Line != 13 || c.Exit != 0 || !slices.Equal(c.Want, []string{"⋯"}) {
		t.Errorf("second command %+v", c)
	}
	if _, err := Session(Block{Text: "output first\n$ simbench\n"}); err == nil {
		t.Error("a session that starts with output was accepted")
	}
}

func TestWordsRefusesWhatNeedsAShell(t *testing.T) {
	for _, line := range []string{"simbench run x | head", "simbench run $X", "simbench run x > y", "simbench run 'x"} {
		if _, err := Words(line); err == nil {
			t.Errorf("%q was split", line)
		}
	}
	got, err := Words(`simbench run --threshold 'answer_p95<5s' "a b"c`)
	if err != nil || !slices.Equal(got, []string{"simbench", "run", "--threshold", "answer_p95<5s", "a bc"}) {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestMatch(t *testing.T) {
	out := "decision 5.6 s\n\nscenario x · simbench v1.2\nrow 1\nrow 2\nrow 3\nlast\n\n"
	tests := []struct {
		want string
		ok   bool
		says string
	}{
		{"decision 5.6 s\n\nscenario x · simbench ⋯\nrow 1\nrow 2\nrow 3\nlast", true, ""},
		{"decision 5.6 s\n⋯\nlast\n", true, ""},
		{"⋯\nrow 2\n⋯", true, ""},
		{"decision ⋯ s\n⋯\nrow 3\nlast", true, ""},
		{"decision 5.7 s\n⋯", false, `shown line 1, "decision 5.7 s"`},
		{"decision 5.6 s\n⋯\nrow 2\nlast", false, `shown line 4, "last", is not in the output where shown (the output has "row 3" there)`},
		{"decision 5.6 s\n\nscenario x · simbench ⋯\nrow 1", false, "goes on after the last line shown"},
		{"⋯\nlast\nmore", false, "past the output's end"},
	}
	for _, tt := range tests {
		got := Match(strings.Split(tt.want, "\n"), out)
		if (got == "") != tt.ok || !strings.Contains(got, tt.says) {
			t.Errorf("Match(%q) = %q, want ok %v saying %q", tt.want, got, tt.ok, tt.says)
		}
	}
}

func TestParagraphs(t *testing.T) {
	src := "# Speed 2 s\n\nIt took `5 s` of\n3.1 s.\n\n```\n9 s\n```\n\n| a | b |\n| --- | --- |\n| 4% | x |\n"
	var got []string
	for _, p := range Paragraphs([]byte(src)) {
		got = append(got, fmt.Sprintf("%d:%s", p.Line, p.Text))
	}
	want := []string{"1:Speed 2 s", "3:It took   of 3.1 s.", "10:a", "10:b", "12:4%", "12:x"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
