//go:build long

package fakeapi

import (
	"bufio"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

// TestLongStreamFirstDeltaAfterTTFT checks that a paced stream sends its
// headers and first content delta no earlier than the time to first token
// (plus a slow first byte), and the end no earlier than the whole latency.
// It asserts lower bounds only, on the wall clock, so it is a long
// check; TestStreamPace covers the pacing arithmetic on virtual time.
func TestLongStreamFirstDeltaAfterTTFT(t *testing.T) {
	const ttft, slow = 120 * time.Millisecond, 60 * time.Millisecond
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{{
		Config: spec.Config{Name: "llm",
			Generation: spec.Generation{TTFT: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: ttft},
				TokensPerSecond: spec.Dist[float64]{Kind: spec.DistConstant, Value: 100}}},
	}, {
		Config: spec.Config{Name: "slow",
			Faults: spec.Faults{SlowFirstByte: spec.SlowFirstByte{Rate: 1, Delay: slow}},
			Generation: spec.Generation{TTFT: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: ttft},
				TokensPerSecond: spec.Dist[float64]{Kind: spec.DistConstant, Value: 100}}},
	}}})
	for _, tt := range []struct {
		service    string
		wantFirst  time.Duration
		wantHeader time.Duration
	}{
		{"llm", ttft, ttft},
		{"slow", ttft + slow, ttft + slow},
	} {
		t0 := time.Now()
		// 10 tokens at 100/s: the answer ends 100ms after the first token.
		res := post(t, c, s.URL(tt.service)+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":10,"stream":true}`)
		headers := time.Since(t0)
		var first time.Duration
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if first == 0 && strings.Contains(sc.Text(), `"content":"simbench"`) {
				first = time.Since(t0)
			}
		}
		end := time.Since(t0)
		res.Body.Close()
		if res.StatusCode != 200 || first == 0 {
			t.Fatalf("%s: status %d, no content delta", tt.service, res.StatusCode)
		}
		if headers < tt.wantHeader || first < tt.wantFirst || end < tt.wantFirst+100*time.Millisecond {
			t.Errorf("%s: headers after %v, first delta after %v, end after %v; want at least %v, %v, %v",
				tt.service, headers, first, end, tt.wantHeader, tt.wantFirst, tt.wantFirst+100*time.Millisecond)
		}
	}
}
