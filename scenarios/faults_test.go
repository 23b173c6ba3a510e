package scenarios

import (
	"strings"
	"testing"

	"github.com/simbench/simbench/spec"
)

// TestFaultKeys reads faults.credit, context_window and retry_delay_body,
// and reports a bad value with its file, line and key.
func TestFaultKeys(t *testing.T) {
	const head = "name = \"a\"\nduration = \"1m\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\", count = 1 } ]\n[tools.t]\nservice = \"s\"\n[[strategy]]\nname = \"x\"\n[services.s]\nrpm = 60\nheaders = \"openai\"\n[services.s.faults]\n"
	sc, err := Parse("a.toml", []byte(head+"credit = 1_000\ncontext_window = 128_000\nretry_delay_body = \"instead\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := spec.Faults{Credit: 1000, ContextWindow: 128_000, RetryDelayBody: spec.RetryDelayInstead}
	if got := sc.Services[0].Faults; got != want {
		t.Fatalf("faults %+v, want %+v", got, want)
	}
	for _, tc := range []struct{ give, want string }{
		{"credit = 0", "a.toml:14:1: services.s.faults.credit: is 0; it must be at least 1"},
		{"context_window = -5", "a.toml:14:1: services.s.faults.context_window: is -5; it must be at least 1"},
		{`retry_delay_body = "inside"`, `a.toml:14:1: services.s.faults.retry_delay_body: unknown value "inside"`},
	} {
		_, err := Parse("a.toml", []byte(head+tc.give+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to say %q", tc.give, err, tc.want)
		}
	}
	none := strings.Replace(head, "headers = \"openai\"", "headers = \"none\"", 1)
	if _, err := Parse("a.toml", []byte(none+"retry_delay_body = \"besides\"\n")); err == nil || !strings.Contains(err.Error(), "services.s.faults.retry_delay_body: needs a retry delay to send") {
		t.Errorf("retry_delay_body without headers: error %v", err)
	}
}
