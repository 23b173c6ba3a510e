package fakeapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

// TestServerDailyQuota: over HTTP, in each API style, the 429 of a spent
// daily quota carries Retry-After in seconds to the reset (a day's quota
// spent at 23:00 Los Angeles time, the reset at midnight: 3600 s) and a
// body that names the daily limit and when it resets.
func TestServerDailyQuota(t *testing.T) {
	daily := spec.Daily{RPD: 1, Zone: "America/Los_Angeles", Start: "2025-01-01T23:00:00"}
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{
		{Config: spec.Config{Name: "llm", Headers: spec.HeadersOpenAI, Daily: daily}},
		{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, Daily: daily}},
		{Config: spec.Config{Name: "tool", Headers: spec.HeadersStandard, Daily: daily}},
	}})
	for _, tc := range []struct{ service, path, body string }{
		{"llm", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"claude", "/v1/messages", `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`},
		{"tool", "/search", `{"q":"x"}`},
	} {
		url := s.URL(tc.service) + tc.path
		if r := do(t, c, "POST", url, tc.body); r.status != 200 {
			t.Fatalf("%s: first request %d, want 200 within the day's quota", tc.service, r.status)
		}
		r := do(t, c, "POST", url, tc.body)
		if r.status != 429 || r.header.Get("Retry-After") != "3600" {
			t.Fatalf("%s: %d with Retry-After %q, want 429 and 3600 s to midnight", tc.service, r.status, r.header.Get("Retry-After"))
		}
		b, _ := json.Marshal(r.body)
		if body := string(b); !strings.Contains(body, "Daily quota exceeded for requests per day (RPD)") || !strings.Contains(body, "resets at 00:00 America/Los_Angeles, in 1h0m0s") {
			t.Errorf("%s: body %s does not name the daily limit and its reset", tc.service, body)
		}
	}
	clk.advance(time.Hour)
	if r := do(t, c, "POST", s.URL("tool")+"/search", `{"q":"x"}`); r.status != 200 {
		t.Fatalf("at the reset: %d, want 200", r.status)
	}
	if st := s.Stats().Services["tool"]; st.RateLimitedBy["rpd"] != 1 {
		t.Errorf("tool's rate_limited_by %v, want rpd 1", st.RateLimitedBy)
	}
}
