package fakeapi

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

// TestGenerationLatency checks that with constant draws an admitted
// request takes exactly latency + ttft + output tokens ÷ tokens per second,
// and that its first token comes at latency + ttft.
func TestGenerationLatency(t *testing.T) {
	tests := []struct {
		name      string
		latency   time.Duration
		gen       spec.Generation
		out       int64
		wantLat   time.Duration
		wantFirst time.Duration
	}{
		// 200ms to the first token, then 100 tokens at 50/s: 2s.
		{"ttft and tps", 0, spec.Generation{TTFT: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 200 * time.Millisecond},
			TokensPerSecond: spec.Dist[float64]{Kind: spec.DistConstant, Value: 50}}, 100, 2200 * time.Millisecond, 200 * time.Millisecond},
		// The latency key comes before generation starts.
		{"latency first", 100 * time.Millisecond, spec.Generation{TTFT: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 200 * time.Millisecond},
			TokensPerSecond: spec.Dist[float64]{Kind: spec.DistConstant, Value: 50}}, 100, 2300 * time.Millisecond, 300 * time.Millisecond},
		// A fractional rate: 3 tokens at 0.5/s take 6s.
		{"slow tokens", 0, spec.Generation{TokensPerSecond: spec.Dist[float64]{Kind: spec.DistConstant, Value: 0.5}}, 3, 6 * time.Second, 0},
		// No output tokens: ttft alone.
		{"no output", 0, spec.Generation{TTFT: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: time.Second},
			TokensPerSecond: spec.Dist[float64]{Kind: spec.DistConstant, Value: 10}}, 0, time.Second, time.Second},
		// Without tokens_per_s the tokens take no time.
		{"ttft only", 50 * time.Millisecond, spec.Generation{TTFT: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 250 * time.Millisecond}},
			1000, 300 * time.Millisecond, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := NewModel(ServiceConfig{Config: spec.Config{Name: "llm", Latency: spec.Dist[time.Duration]{Value: tt.latency}, Generation: tt.gen}}, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				now := time.Duration(i) * time.Hour
				d := m.Arrive(now, Request{Tokens: 10, OutputTokens: tt.out})
				if d.Kind != KindOK || d.Latency != tt.wantLat || d.FirstToken != tt.wantFirst {
					t.Fatalf("arrival %d: kind %v, latency %v, first token %v; want ok, %v, %v", i, d.Kind, d.Latency, d.FirstToken, tt.wantLat, tt.wantFirst)
				}
				m.Finish(now+d.Latency, d.ID, false)
			}
		})
	}
}

// TestGenerationOwnStream checks that turning generation on draws from a
// stream of its own: with a time to first token of constant 0 every
// latency, fault and overload draw is the one the service makes without
// it, and with a random one the other draws still are.
func TestGenerationOwnStream(t *testing.T) {
	base := ServiceConfig{
		Config: spec.Config{Name: "llm", RPS: 50,
			Latency: spec.Dist[time.Duration]{Kind: spec.DistLognormal, P50: 200 * time.Millisecond, P95: 900 * time.Millisecond},
			Faults: spec.Faults{ErrorRate: 0.05, ResetRate: 0.02, SlowFirstByte: spec.SlowFirstByte{Rate: 0.1, Delay: time.Second},
				Overload: spec.Overload{Every: 10 * time.Second, Length: time.Second, Rate: 0.5}}},
	}
	run := func(g spec.Generation) []Decision {
		c := base
		c.Generation = g
		m, err := NewModel(c, rand.New(rand.NewPCG(7, 8)))
		if err != nil {
			t.Fatal(err)
		}
		var out []Decision
		for i := range 2000 {
			now := time.Duration(i) * 13 * time.Millisecond
			d := m.Arrive(now, Request{Tokens: 5, OutputTokens: 0})
			if d.Admitted() && d.Kind != KindHang {
				m.Finish(now, d.ID, false)
			}
			d.FirstToken = 0
			out = append(out, d)
		}
		return out
	}
	off := run(spec.Generation{})
	for _, g := range []spec.Generation{
		{TTFT: spec.Dist[time.Duration]{Kind: spec.DistConstant}},
		// No output tokens are asked for, so only the time to first token
		// adds to the latency; take it off to compare.
		{TTFT: spec.Dist[time.Duration]{Kind: spec.DistUniform, Min: time.Millisecond, Max: 2 * time.Millisecond}, TokensPerSecond: spec.Dist[float64]{Kind: spec.DistExponential, Mean: 40}},
	} {
		on := run(g)
		for i := range off {
			a, b := off[i], on[i]
			if g.TTFT.Kind == spec.DistUniform && b.Admitted() {
				if extra := b.Latency - a.Latency; extra < time.Millisecond || extra > 2*time.Millisecond {
					t.Fatalf("%+v arrival %d: latency %v, without generation %v: want 1–2ms more", g, i, b.Latency, a.Latency)
				}
				b.Latency = a.Latency
			}
			if a != b {
				t.Fatalf("%+v arrival %d: %+v, without generation %+v", g, i, b, a)
			}
		}
	}
}

// TestInputOutputTPM checks that the input- and output-token limits each
// bind on their own, with exact counts, and that settling the output
// tokens gives back what the answer did not use.
func TestInputOutputTPM(t *testing.T) {
	m, err := NewModel(ServiceConfig{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, InputTPM: 1000, OutputTPM: 100}}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	admit := func(in, out int64) Decision {
		t.Helper()
		return m.Arrive(0, Request{Tokens: in, OutputTokens: out})
	}
	// Ten requests of 100 input tokens fill ITPM; the eleventh is refused by it.
	for i := range 10 {
		if d := admit(100, 0); d.Kind != KindOK {
			t.Fatalf("input request %d: %v %v", i, d.Kind, d.Limit)
		}
	}
	d := admit(100, 0)
	if d.Kind != KindRateLimited || d.Limit != LimitITPM || d.InputTokenQuota != (Quota{1000, 0, time.Minute}) {
		t.Fatalf("11th input request: %v %v %+v; want 429 by itpm, 0 of 1000 left", d.Kind, d.Limit, d.InputTokenQuota)
	}
	// Output tokens have their own bucket: five of 20 fit, the sixth not.
	var first ID
	for i := range 5 {
		d := admit(0, 20)
		if d.Kind != KindOK {
			t.Fatalf("output request %d: %v %v", i, d.Kind, d.Limit)
		}
		if i == 0 {
			first = d.ID
		}
	}
	if d := admit(0, 20); d.Kind != KindRateLimited || d.Limit != LimitOTPM || d.OutputTokenQuota.Remaining != 0 {
		t.Fatalf("6th output request: %v %v %+v; want 429 by otpm", d.Kind, d.Limit, d.OutputTokenQuota)
	}
	// The first answer used 5 of its 20: settling gives back 15.
	m.SettleOutput(0, first, 5)
	if d := admit(0, 15); d.Kind != KindOK || d.OutputTokenQuota.Remaining != 0 {
		t.Fatalf("after settling: %v %v %+v; want 15 more admitted", d.Kind, d.Limit, d.OutputTokenQuota)
	}
	if d := admit(0, 1); d.Limit != LimitOTPM {
		t.Fatalf("after the refund is spent: %v %v; want 429 by otpm", d.Kind, d.Limit)
	}
	// More input than ITPM allows in a minute can never pass.
	if d := admit(1001, 0); d.Kind != KindTooLarge || d.Limit != LimitITPM {
		t.Fatalf("too large: %v %v", d.Kind, d.Limit)
	}
	st := m.Stats()
	if st.RateLimitedBy["itpm"] != 1 || st.RateLimitedBy["otpm"] != 2 || st.RateLimited != 3 {
		t.Fatalf("stats %+v", st.RateLimitedBy)
	}
}

// TestITPMOTPMHTTP checks the anthropic-ratelimit-input-tokens and
// output-tokens headers and the typed 429s through the server.
func TestITPMOTPMHTTP(t *testing.T) {
	var clock manualClock
	s, c := startServer(t, ServerConfig{Clock: clock.now, Services: []ServiceConfig{{
		Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, TPM: 100_000, InputTPM: 40, OutputTPM: 30},
	}}})
	url := s.URL("claude") + "/v1/messages"
	// 44 bytes of messages: 11 input tokens; max_tokens 10 output tokens.
	msg := func(maxTokens string) string {
		return `{"model":"m","max_tokens":` + maxTokens + `,"messages":[{"role":"user","content":"hello world"}]}`
	}
	r := do(t, c, "POST", url, msg("10"), "X-Simbench-Tokens", "15")
	h := r.header
	if r.status != 200 || h.Get("Anthropic-Ratelimit-Input-Tokens-Limit") != "40" || h.Get("Anthropic-Ratelimit-Input-Tokens-Remaining") != "25" ||
		h.Get("Anthropic-Ratelimit-Output-Tokens-Limit") != "30" || h.Get("Anthropic-Ratelimit-Output-Tokens-Remaining") != "20" ||
		h.Get("Anthropic-Ratelimit-Tokens-Limit") != "100000" || h.Get("Anthropic-Ratelimit-Output-Tokens-Reset") == "" {
		t.Fatalf("status %d, headers %v", r.status, h)
	}
	// Input: 25 left, 30 asked.
	r = do(t, c, "POST", url, msg("1"), "X-Simbench-Tokens", "30")
	e, _ := r.body["error"].(map[string]any)
	if r.status != 429 || e["type"] != "rate_limit_error" || !strings.Contains(e["message"].(string), "40 input tokens per minute") ||
		r.body["request_id"] == nil || r.header.Get("Retry-After") == "" {
		t.Fatalf("input 429: %d %v %v", r.status, r.header, r.body)
	}
	// Output: 20 left, 25 asked; the input fits.
	r = do(t, c, "POST", url, msg("25"), "X-Simbench-Tokens", "1")
	e, _ = r.body["error"].(map[string]any)
	if r.status != 429 || e["type"] != "rate_limit_error" || !strings.Contains(e["message"].(string), "30 output tokens per minute") {
		t.Fatalf("output 429: %d %v", r.status, r.body)
	}
	st := s.Stats().Services["claude"]
	if st.RateLimitedBy["itpm"] != 1 || st.RateLimitedBy["otpm"] != 1 || st.Accepted != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestStreamPace checks when a streamed answer's groups go.
func TestStreamPace(t *testing.T) {
	tests := []struct {
		name             string
		paced            bool
		slow             time.Duration
		d                Decision
		n                int
		wantFirst, wantS time.Duration
	}{
		// Unpaced: one n-th of the latency before each group.
		{"unpaced", false, 0, Decision{Latency: 300 * time.Millisecond}, 3, 100 * time.Millisecond, 100 * time.Millisecond},
		// Unpaced with a slow first byte: it goes first, then the rest evenly.
		{"slow first byte", false, time.Second, Decision{Latency: 1300 * time.Millisecond, SlowFirstByte: true}, 3, 1100 * time.Millisecond, 100 * time.Millisecond},
		// Paced: the first group at the first token, the rest over the generation time.
		{"paced", true, 0, Decision{Latency: 1200 * time.Millisecond, FirstToken: 200 * time.Millisecond}, 3, 200 * time.Millisecond, 500 * time.Millisecond},
		// Paced with no time to first token: the first group at once.
		{"paced at once", true, 0, Decision{Latency: 400 * time.Millisecond}, 5, 0, 100 * time.Millisecond},
		// One group: all at the first token.
		{"one group", true, 0, Decision{Latency: time.Second, FirstToken: time.Second}, 1, time.Second, 0},
	}
	for _, tt := range tests {
		first, step := streamPace(tt.paced, tt.slow, &tt.d, tt.n)
		if first != tt.wantFirst || step != tt.wantS {
			t.Errorf("%s: first %v, step %v; want %v, %v", tt.name, first, step, tt.wantFirst, tt.wantS)
		}
	}
}

// TestGenerationValidate checks that bad generation settings are all
// reported, in the units they were given in.
func TestGenerationValidate(t *testing.T) {
	err := ServiceConfig{Config: spec.Config{Name: "llm", InputTPM: -1, Generation: spec.Generation{
		TTFT:            spec.Dist[time.Duration]{Kind: spec.DistUniform, Min: time.Second, Max: time.Millisecond},
		TokensPerSecond: spec.Dist[float64]{Kind: spec.DistUniform, Min: 80, Max: 40},
	}}}.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"input_tpm", "ttft.max: max (1ms) is below min (1s)", "tokens_per_s.max: max (40) is below min (80)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nwant it to say %q", err, want)
		}
	}
}
