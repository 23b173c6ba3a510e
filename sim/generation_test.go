package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
)

// TestGenerationDefaultsUnchanged checks that the generation keys draw
// from a stream of their own: a built-in scenario whose services get a
// time to first token of constant 0 gives byte-identical results to the
// scenario as written, and one of 50ms does not (so the key reaches the
// model). The scenario digest, which names the conditions, is left out.
func TestGenerationDefaultsUnchanged(t *testing.T) {
	run := func(ttft *time.Duration) []byte {
		t.Helper()
		sc, err := scenarios.Builtin("research-agent")
		if err != nil {
			t.Fatal(err)
		}
		if ttft != nil {
			for i := range sc.Services {
				sc.Services[i].Generation.TTFT = spec.Constant(*ttft)
			}
		}
		res, err := Run(context.Background(), sc, Options{Duration: 2 * time.Minute, Parallel: 1})
		if err != nil {
			t.Fatal(err)
		}
		// The digest identifies the scenario, which differs; the figures
		// must not.
		res.ScenarioDigest = ""
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	zero, fifty := time.Duration(0), 50*time.Millisecond
	plain := run(nil)
	if on := run(&zero); !bytes.Equal(plain, on) {
		i := 0
		for i < min(len(on), len(plain)) && on[i] == plain[i] {
			i++
		}
		t.Errorf("a ttft of 0 changed the results from byte %d: %.200s\nwant %.200s", i, on[i:], plain[i:])
	}
	if on := run(&fifty); bytes.Equal(plain, on) {
		t.Error("a ttft of 50ms left the results as they were")
	}
}

// TestLoadsCountTTFT checks that a service's mean latency in the load
// estimate includes its mean time to first token.
func TestLoadsCountTTFT(t *testing.T) {
	sc, err := scenarios.Builtin("research-agent")
	if err != nil {
		t.Fatal(err)
	}
	before := setup.Loads(sc)
	for i := range sc.Services {
		sc.Services[i].Generation.TTFT = spec.Constant(time.Second)
	}
	after := setup.Loads(sc)
	if len(before) == 0 || len(after) != len(before) {
		t.Fatalf("loads %v, then %v", before, after)
	}
	for i := range before {
		if got, want := after[i].MeanLatency, before[i].MeanLatency+time.Second; got != want {
			t.Errorf("%s: mean latency %v with a 1s ttft; want %v", after[i].Name, got, want)
		}
	}
}
