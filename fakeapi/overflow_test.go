package fakeapi

import (
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

const forever = time.Duration(math.MaxInt64)

// TestTokenSumCannotWrap sends a request whose input and output tokens sum
// past MaxInt64: the sum must saturate and be refused by a 100,000-token
// TPM limit, not wrap to a negative count that passes it.
func TestTokenSumCannotWrap(t *testing.T) {
	tests := []struct {
		name        string
		in, out     int64
		wantKind    Kind
		wantTokens  int64
		wantCharged int64
	}{
		{"2^62 + 2^62", 1 << 62, 1 << 62, KindTooLarge, math.MaxInt64, 0},
		{"max + max", math.MaxInt64, math.MaxInt64, KindTooLarge, math.MaxInt64, 0},
		{"max + 1", math.MaxInt64, 1, KindTooLarge, math.MaxInt64, 0},
		{"within the limit", 60_000, 40_000, KindOK, 100_000, 100_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "llm", TPM: 100_000}})
			d := m.Arrive(0, Request{Tokens: tt.in, OutputTokens: tt.out})
			if d.Kind != tt.wantKind || d.Tokens != tt.wantTokens {
				t.Fatalf("decision %v (status %d) charging %d tokens, want %v charging %d", d.Kind, d.Status, d.Tokens, tt.wantKind, tt.wantTokens)
			}
			if s := m.Stats(); s.TokensAccepted != tt.wantCharged {
				t.Errorf("tokens_accepted = %d, want %d", s.TokensAccepted, tt.wantCharged)
			}
		})
	}
}

// TestTokenAccountingSaturates admits huge requests to a service without a
// token limit: the accepted and wasted token counts saturate, never turn
// negative.
func TestTokenAccountingSaturates(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "tools"}})
	for range 3 {
		d := m.Arrive(0, Request{Tokens: 1 << 62, OutputTokens: 1 << 62})
		if !d.Admitted() {
			t.Fatalf("refused: %+v", d)
		}
		m.Finish(time.Second, d.ID, true)
	}
	s := m.Stats()
	if s.TokensAccepted != math.MaxInt64 || s.WastedTokens != math.MaxInt64 {
		t.Errorf("tokens_accepted = %d, wasted_tokens = %d, want both %d", s.TokensAccepted, s.WastedTokens, int64(math.MaxInt64))
	}
}

// TestHugeRetryAfterSaturates gives a concurrency 429 the longest retry
// delay: the advertised delay, the headers and the client's retry deadline
// saturate instead of wrapping negative.
func TestHugeRetryAfterSaturates(t *testing.T) {
	for _, style := range []spec.HeaderStyle{spec.HeadersOpenAI, spec.HeadersStandard, spec.HeadersAnthropic} {
		t.Run(string(style), func(t *testing.T) {
			m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", MaxConcurrent: 1, ConcurrencyRetryAfter: forever - 5, Headers: style}})
			m.Arrive(0, Request{Client: "a"})
			d := m.Arrive(time.Second, Request{Client: "b"})
			if d.Kind != KindRateLimited || d.RetryAfter != forever {
				t.Fatalf("decision %v with retry after %v, want a 429 saying %v", d.Kind, d.RetryAfter, forever)
			}
			if e := m.Arrive(2*time.Second, Request{Client: "b"}); !e.EarlyRetry {
				t.Errorf("a retry 1 s later is not early: the client's deadline wrapped")
			}
			h := http.Header{}
			d.SetHeaders(h, style, time.Unix(0, 0))
			if v := h.Get("Retry-After"); v == "" || v[0] == '-' {
				t.Errorf("Retry-After %q", v)
			}
			if v := h.Get("Retry-After-Ms"); style == spec.HeadersOpenAI {
				if ms, err := strconv.ParseInt(v, 10, 64); err != nil || ms <= 0 {
					t.Errorf("Retry-After-Ms %q", v)
				}
			}
		})
	}
}

// TestRoundUpSaturates checks RoundUp near the largest Duration.
func TestRoundUpSaturates(t *testing.T) {
	tests := []struct {
		d, unit, want time.Duration
	}{
		{1500 * ms, time.Second, 2 * time.Second},
		{2 * time.Second, time.Second, 2 * time.Second},
		{forever, time.Second, forever},
		{forever, time.Millisecond, forever},
		{forever - forever%time.Second, time.Second, forever - forever%time.Second},
	}
	for _, tt := range tests {
		if got := RoundUp(tt.d, tt.unit); got != tt.want {
			t.Errorf("RoundUp(%d, %v) = %d, want %d", tt.d, tt.unit, got, tt.want)
		}
	}
}

// TestOverloadTinyEvery sets overload episodes 1 ns apart and 1 ns long,
// then sends requests an hour apart: each arrival must be decided in a
// bounded number of steps (stepping 2 ns at a time would take 1.8×10^12
// steps per arrival), and about half of the arrivals must land in an
// episode, as Length ÷ (Every + Length) says.
func TestOverloadTinyEvery(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", Faults: spec.Faults{Overload: spec.Overload{Every: 1, Length: 1}}}})
	const n = 20_000
	var over int
	for i := 1; i <= n; i++ {
		d := m.Arrive(time.Duration(i)*time.Hour, Request{})
		switch {
		case d.Kind == KindOverloaded:
			over++
			if d.Wait <= 0 || d.Wait > 1 {
				t.Fatalf("arrival %d: overloaded with wait %v, want 1ns", i, d.Wait)
			}
		case d.Admitted():
			m.Finish(time.Duration(i)*time.Hour, d.ID, false)
		default:
			t.Fatalf("arrival %d: %+v", i, d)
		}
	}
	if f := float64(over) / n; f < 0.48 || f > 0.52 {
		t.Errorf("%.3f of arrivals overloaded, want about 0.5", f)
	}
}

// TestOverloadJumpMatchesSteps compares the long-run share of arrivals that
// meet an episode when the model steps through episodes (arrivals often)
// and when it jumps (arrivals rare): both must match Length ÷ (Every + Length).
func TestOverloadJumpMatchesSteps(t *testing.T) {
	cfg := ServiceConfig{Config: spec.Config{Name: "s", Faults: spec.Faults{Overload: spec.Overload{Every: 3 * time.Second, Length: time.Second}}}}
	share := func(gap time.Duration, n int) float64 {
		m := newTestModel(t, cfg)
		var over int
		for i := 1; i <= n; i++ {
			now := time.Duration(i) * gap
			if d := m.Arrive(now, Request{}); d.Kind == KindOverloaded {
				over++
			} else {
				m.Finish(now, d.ID, false)
			}
		}
		return float64(over) / float64(n)
	}
	stepped := share(100*ms, 400_000) // 40,000 s: ~10,000 episodes, stepped
	jumped := share(time.Hour, 20_000)
	for _, got := range []float64{stepped, jumped} {
		if got < 0.235 || got > 0.265 {
			t.Errorf("share overloaded %.4f (stepped %.4f, jumped %.4f), want about 0.25", got, stepped, jumped)
		}
	}
}

// TestOverloadExtremeDurations sets episode durations at the largest
// Duration: sums saturate, so an endless episode stays endless.
func TestOverloadExtremeDurations(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", Faults: spec.Faults{Overload: spec.Overload{Every: 1, Length: forever}}}})
	for _, now := range []time.Duration{time.Second, time.Hour, forever / 2, forever - 1} {
		if d := m.Arrive(now, Request{}); d.Kind != KindOverloaded || d.Wait <= 0 {
			t.Errorf("at %v: %v with wait %v, want overloaded for the rest of time", now, d.Kind, d.Wait)
		}
	}
	m = newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", Faults: spec.Faults{Overload: spec.Overload{Every: forever, Length: forever}}}})
	for _, now := range []time.Duration{0, time.Hour, forever - 1} {
		d := m.Arrive(now, Request{})
		if d.Kind == KindOverloaded && d.Wait <= 0 {
			t.Errorf("at %v: overloaded with wait %v", now, d.Wait)
		}
		if d.Admitted() {
			m.Finish(now, d.ID, false)
		}
	}
}
