package names

import (
	"strings"
	"testing"
)

func TestScenario(t *testing.T) {
	tests := []struct{ give, want string }{
		{"tier3", ""},
		{"burst-8.v2_a", ""},
		{"../../x", `"../../x" starts with '.'`},
		{"a/b", `"a/b" holds '/'`},
		{"/abs", `"/abs" starts with '/'`},
		{"a\x00b", `"a\x00b" holds the byte 0x00`},
		{"a b", `"a b" holds the byte 0x20`},
		{"é", `"é" starts with the byte 0xC3`},
		{strings.Repeat("n", 300), "is 300 bytes long; a scenario name is at most 64"},
		{"", "is empty"},
	}
	for _, tt := range tests {
		if got := Scenario(tt.give); !strings.Contains(got, tt.want) || (tt.want == "") != (got == "") {
			t.Errorf("Scenario(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestNameAndText(t *testing.T) {
	tests := []struct{ give, want string }{
		{"bounded 8 (paced)", ""},
		{"a\nb", "holds the control character U+000A"},
		{"a\u202eb", "holds the control character U+202E"},
		{"a\tb", "holds the control character U+0009"},
		{strings.Repeat("s", 65), "is 65 bytes long; a strategy name is at most 64"},
		{" ", "is empty; name the strategy"},
	}
	for _, tt := range tests {
		if got := Name("strategy", tt.give); !strings.Contains(got, tt.want) || (tt.want == "") != (got == "") {
			t.Errorf("Name(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
	for give, want := range map[string]string{"one line": "", "two\nlines": "spans several lines", "esc\x1b": "U+001B"} {
		if got := Text(give); !strings.Contains(got, want) || (want == "") != (got == "") {
			t.Errorf("Text(%q) = %q, want %q", give, got, want)
		}
	}
}
