package decision

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestOverTextSaysTheLoadQueues: a workload that offers more turns than
// even the full limit sustains is answered only because its turns wait,
// and the sentence says so, with the ratio and the sessions the limit
// carries worked out here; a workload within the full limit (even one over
// the headroom) gets nothing added.
func TestOverTextSaysTheLoadQueues(t *testing.T) {
	for _, tt := range []struct {
		name             string
		offered, full    float64
		sessions         int
		wantRatio, carry string
	}{
		// tier3: 80 agents offer 2,220.77 turns/min against 10,000 requests/min ÷ 8 calls.
		{"closed", 2220.77, 1250, 80, "1.78", fmt.Sprintf("about %d of the 80 sessions", int(math.Floor(80/(2220.77/1250))))},
		{"open", 120, 60, 0, "2", "about 1 turns/s of the 2 offered"},
		{"exactly-one-session", 300, 100, 3, "3", "about 1 of the 3 sessions"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := overText(LoadCheck{OfferedPerMinute: tt.offered, FullPerMinute: tt.full, Sessions: tt.sessions, LimitedBy: "api"})
			for _, w := range []string{"offers " + tt.wantRatio + "× what even the full limit of api sustains", "so turns queue", tt.carry} {
				if !strings.Contains(got, w) {
					t.Errorf("overText = %q; want it to hold %q", got, w)
				}
			}
		})
	}
	for _, l := range []LoadCheck{
		{OfferedPerMinute: 1200, FullPerMinute: 1250, SustainedPerMinute: 1125, Sessions: 80},
		{OfferedPerMinute: 1250, FullPerMinute: 1250, Sessions: 80},
		{OfferedPerMinute: 10},
	} {
		if got := overText(l); got != "" {
			t.Errorf("overText(%+v) = %q; want nothing for a load within the full limit", l, got)
		}
	}
}
