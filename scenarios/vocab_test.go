package scenarios

import (
	"fmt"
	"strings"
	"testing"

	"github.com/simbench/simbench/sched"
)

// choiceNames returns the String of each of xs.
func choiceNames[T fmt.Stringer](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

// TestStrategyKnobsAreSchedsVocabulary checks that the file format keeps
// no list of sched's names: every choice sched lists for a strategy knob
// decodes to the sched value of that name, and a name sched does not know
// is refused with sched's list. A name added to sched is therefore taken
// by validate, and reaches the scheduler unchanged.
func TestStrategyKnobsAreSchedsVocabulary(t *testing.T) {
	const head = "name = \"a\"\nduration = \"1m\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\", count = 1 } ]\n" +
		"[tools.t]\nservice = \"s\"\n[services.s]\nrpm = 60\n[[strategy]]\nname = \"x\"\nfan_out = 2\n"
	for _, knob := range []struct {
		line  string // the knob's line, %s for the name
		names []string
		got   func(*Strategy) fmt.Stringer
	}{
		{`retry = { backoff = "%s", base = "1s" }`, choiceNames(sched.Backoffs()), func(s *Strategy) fmt.Stringer { return s.Retry.Backoff }},
		{`retry = { over_max_retry_after = "%s" }`, choiceNames(sched.OverMaxRetryAfters()), func(s *Strategy) fmt.Stringer { return s.Retry.OverMaxRetryAfter }},
		{`fan_out_mode = "%s"`, choiceNames(sched.FanOutModes()), func(s *Strategy) fmt.Stringer { return s.FanOutMode }},
		{`join = "%s"`, choiceNames(sched.JoinModes()), func(s *Strategy) fmt.Stringer { return s.Join }},
		{`adaptive = { algorithm = "%s" }`, choiceNames(sched.Algorithms()), func(s *Strategy) fmt.Stringer { return s.Adaptive.Algorithm }},
	} {
		for _, name := range knob.names {
			line := fmt.Sprintf(knob.line, name)
			sc, err := Parse("a.toml", []byte(head+line+"\n"))
			if err != nil {
				t.Errorf("%s: %v", line, err)
				continue
			}
			if got := knob.got(&sc.Strategies[0]).String(); got != name {
				t.Errorf("%s: decoded as %q", line, got)
			}
		}
		line := fmt.Sprintf(knob.line, "no-such-name")
		_, err := Parse("a.toml", []byte(head+line+"\n"))
		if err == nil {
			t.Errorf("%s: accepted", line)
			continue
		}
		for _, name := range knob.names {
			if !strings.Contains(err.Error(), `"`+name+`"`) {
				t.Errorf("%s: error %q does not offer %q", line, err, name)
			}
		}
	}
}
