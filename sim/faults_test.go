package sim

import (
	"testing"
	"time"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/spec"
)

// faultPair is two sessions of one turn each, both calling tool t (tokens
// input tokens) at time 0, on a service whose every request takes 100 ms,
// with faults f, retried up to 3 attempts without backoff.
func faultPair(tokens float64, f spec.Faults, rps float64, headers spec.HeaderStyle) *scenarios.Scenario {
	sc := pair(scenarios.KindRead, false, scenarios.Retry{Backoff: sched.BackoffNone, Attempts: 3, HonorRetryAfter: true})
	sc.Services[0].Faults = f
	sc.Services[0].Headers = headers
	sc.Services[0].RequestsPerSecond = rps
	sc.Tools[0].Tokens = spec.Constant(tokens)
	return sc
}

// TestEngineNonRetryableFaults: a spent credit and a context too long fail
// their calls at the first attempt, as the scheduler reads the bodies'
// error codes.
func TestEngineNonRetryableFaults(t *testing.T) {
	tests := []struct {
		name          string
		tokens        float64
		f             spec.Faults
		attempts, bad int64
	}{
		// The first arrival spends the credit; the second is refused.
		{"credit spent", 10, spec.Faults{Credit: 1}, 2, 1},
		{"context too long", 1000, spec.Faults{ContextWindow: 100}, 2, 2},
		{"within both", 10, spec.Faults{Credit: 1000, ContextWindow: 100}, 2, 0},
	}
	for _, tt := range tests {
		for _, headers := range []spec.HeaderStyle{spec.HeadersOpenAI, spec.HeadersAnthropic, spec.HeadersStandard} {
			t.Run(tt.name+"/"+string(headers), func(t *testing.T) {
				r := runOne(t, faultPair(tt.tokens, tt.f, 0, headers)).result()
				if r.Attempts != tt.attempts || r.Failed != tt.bad || r.RateLimited != 0 {
					t.Fatalf("attempts %d, failed %d, rate limited %d; want %d, %d, 0", r.Attempts, r.Failed, r.RateLimited, tt.attempts, tt.bad)
				}
			})
		}
	}
}

// TestEngineRetryDelayInBody: at 1 request/s with a bucket of one, the
// second call is told in the 429's body only to wait 1 s; the scheduler
// honours it (without it, no backoff would retry at once, early), so the
// call ends at 1.1 s.
func TestEngineRetryDelayInBody(t *testing.T) {
	for _, where := range spec.RetryDelayBodies {
		t.Run(string(where), func(t *testing.T) {
			sc := faultPair(0, spec.Faults{RetryDelayBody: where}, 1, spec.HeadersStandard)
			r := runOne(t, sc).result()
			if r.RateLimited != 1 || r.EarlyRetries != 0 || r.Failed != 0 || r.Attempts != 3 {
				t.Fatalf("rate limited %d, early %d, failed %d, attempts %d; want 1, 0, 0, 3", r.RateLimited, r.EarlyRetries, r.Failed, r.Attempts)
			}
			if want := (1100 * time.Millisecond).Seconds(); r.FinishS != want {
				t.Fatalf("finish %v s, want %v", r.FinishS, want)
			}
		})
	}
}
