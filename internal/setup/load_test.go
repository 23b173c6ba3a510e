package setup

import (
	"testing"
	"time"

	"github.com/simbench/simbench/scenarios"
)

func TestLoadsOfTier3(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	got := Loads(sc)
	if len(got) != 1 {
		t.Fatalf("loads %+v", got)
	}
	l := got[0]
	// lognormal with p50 400 ms, p95 800 ms: mean = p50 × exp(σ²/2), σ = ln 2 / 1.645.
	if l.Name != "openai" || l.RequestsPerMinute != 10_000 || l.TokensPerMinute != 10_000_000 || l.TokensPerCall != 1000 || l.CallsPerTurn != 8 {
		t.Errorf("load %+v", l)
	}
	if l.MeanLatency < 437*time.Millisecond || l.MeanLatency > 438*time.Millisecond {
		t.Errorf("mean latency %v, want ≈ 437.14 ms", l.MeanLatency)
	}
}
