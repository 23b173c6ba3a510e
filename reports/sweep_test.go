package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/results"
)

func TestWriteSweepMarksChosenAndKnee(t *testing.T) {
	points := []results.SweepPoint{
		{Cap: 1, P50Ms: 5000, P95Ms: 6000, AnsweredShare: 1, GoodputPerS: 2},
		{Cap: 2, P50Ms: 2500, P95Ms: 3000, AnsweredShare: 1, GoodputPerS: 4},
		{Cap: 4, P50Ms: 1300, P95Ms: 1600, AnsweredShare: 1, GoodputPerS: 7.5},
		{Cap: 8, P50Ms: 1200, P95Ms: 1500, AnsweredShare: 1, GoodputPerS: 7.9, RateLimitedShare: 0.004},
	}
	row := decision.NewSweepRow("sessions=4", points, decision.Rule{MaxShare: 0.001})
	if row.Chosen != 4 || row.Knee != 4 {
		t.Fatalf("chosen %d knee %d, want 4 and 4", row.Chosen, row.Knee)
	}
	var b bytes.Buffer
	if err := WriteSweep(&b, "sweep of x · strategy y", []results.SweepRow{row, {Load: "as written", Points: points[3:]}}, decision.Rule{MaxShare: 0.001}.String(), 0.001); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"load: sessions=4", "← chosen ← knee", "1,600", "0.400%", "no cap kept 429s at or below 0.10%"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
