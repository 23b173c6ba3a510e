package decision

import (
	"strings"
	"testing"
	"time"
)

func TestOverallOf(t *testing.T) {
	a, err := Recommend(Service{Name: "sources", RPM: 600, MeanLatency: 550 * time.Millisecond, CallsPerTurn: 8, Headroom: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Recommend(Service{Name: "llm", RPM: 5000, TPM: 2_000_000, TokensPerCall: 2500, MeanLatency: 1800 * time.Millisecond, CallsPerTurn: 1, Headroom: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	o, ok := OverallOf([]Plan{a, b})
	// sources: floor(10/s × 0.7 × 0.55 s) = 3, 52 turns/min; llm: tpm binds
	// at 800 requests/min: floor(13.33 × 0.7 × 1.8) = 16, 560 turns/min.
	if !ok || o.MaxInFlight != 3+16 || o.TurnsPerMinute != 52 || o.LimitedBy != "sources" {
		t.Errorf("overall %+v", o)
	}
	lines := strings.Join(o.Lines([]Plan{a, b}), "\n")
	for _, want := range []string{"overall max in flight: 3 (sources) + 16 (llm) = 19", "overall turns/min sustainable: 52, limited by sources"} {
		if !strings.Contains(lines, want) {
			t.Errorf("lines lack %q:\n%s", want, lines)
		}
	}
	if _, ok := OverallOf(nil); ok {
		t.Error("no plans gave an overall")
	}
}
