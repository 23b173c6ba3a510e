package scenarios

import (
	"strings"
	"testing"
)

// TestConflictKey checks the forms faults.conflict takes (true, false, a
// fraction) and that a bad value is reported with its file, line and key.
func TestConflictKey(t *testing.T) {
	const head = "name = \"a\"\nduration = \"1m\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\", count = 1 } ]\n[tools.t]\nservice = \"s\"\nkind = \"write\"\n[[strategy]]\nname = \"x\"\n[services.s]\nrpm = 60\n[services.s.faults]\n"
	tests := []struct {
		give string
		want float64
	}{
		{"conflict = true", 1},
		{"conflict = false", 0},
		{"conflict = 0.25", 0.25},
		{"conflict = 1", 1},
		{"", 0},
	}
	for _, tt := range tests {
		sc, err := Parse("a.toml", []byte(head+tt.give+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", tt.give, err)
		}
		if got := sc.Services[0].Faults.Conflict; got != tt.want {
			t.Errorf("%q: conflict %v, want %v", tt.give, got, tt.want)
		}
	}
	for _, tc := range []struct{ give, want string }{
		{"conflict = 1.5", "a.toml:14:1: services.s.faults.conflict: is 1.5; it is a fraction and must be between 0 and 1"},
		{`conflict = "yes"`, `a.toml:14:1: services.s.faults.conflict: wants true, false or a fraction, like conflict = true or conflict = 0.5, got string "yes"`},
	} {
		_, err := Parse("a.toml", []byte(head+tc.give+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to say %q", tc.give, err, tc.want)
		}
	}
}
