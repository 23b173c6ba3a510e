package fakeapi

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// TestToolUseAnswerIsSizedByItsCalls checks that an answer of tool_use
// blocks only reports output tokens within 20% of its serialized size in
// tokens (bytes ÷ 4), not the request's max_tokens.
func TestToolUseAnswerIsSizedByItsCalls(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic},
		Agent: AgentConfig{Calls: func(*rand.Rand) int { return 2 }}}}})
	body := `{"model":"m","max_tokens":8192,"messages":[{"role":"user","content":"look two things up"}],
		"tools":[{"name":"lookup","input_schema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}]}`
	r := do(t, c, "POST", s.URL("claude")+"/v1/messages", body)
	content, err := json.Marshal(r.body["content"])
	if err != nil {
		t.Fatal(err)
	}
	usage := r.body["usage"].(map[string]any)
	got, size := usage["output_tokens"].(float64), float64(len(content))/4
	if r.body["stop_reason"] != "tool_use" || math.Abs(got-size) > 0.2*size {
		t.Errorf("output tokens %v for %d bytes of tool_use blocks (%.1f tokens); want within 20%%: %v", got, len(content), size, r.body)
	}
}

// TestSettledOutputFreesTheTokenLimits checks that the tokens limits count
// the answer's output tokens, not max_tokens: a second request that fits
// only if the first one's unused max_tokens came back is admitted.
func TestSettledOutputFreesTheTokenLimits(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  spec.Config
	}{
		{"otpm", spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, OutputTPM: 1000}},
		{"tpm", spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, TPM: 1000}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var clk manualClock
			s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{{Config: tt.cfg,
				Agent: AgentConfig{Answer: spec.Constant(10.0)}}}})
			body := `{"model":"m","max_tokens":900,"messages":[{"role":"user","content":"hi"}]}`
			first := do(t, c, "POST", s.URL("claude")+"/v1/messages", body)
			if first.status != 200 || first.body["usage"].(map[string]any)["output_tokens"] != 10.0 {
				t.Fatalf("first answer %d %v, want 200 with 10 output tokens", first.status, first.body)
			}
			// No time passes: only the settled 890 tokens make room.
			if r := do(t, c, "POST", s.URL("claude")+"/v1/messages", body); r.status != 200 {
				t.Errorf("second request %d %v, want 200 once the first settled at 10 tokens", r.status, r.body)
			}
		})
	}
}

func TestTextAnswerLengthsAreDrawnUnderMaxTokens(t *testing.T) {
	a := AgentConfig{}
	seen := map[int64]bool{}
	for conv := range uint64(50) {
		n, _ := answerTokens(&a, 1, &wire.AgentRequest{Conv: conv}, &wire.Reply{}, 4096)
		if n < 1 || n > 4096 {
			t.Fatalf("answer of %d tokens, want 1 to 4096", n)
		}
		seen[n] = true
		if m, _ := answerTokens(&a, 1, &wire.AgentRequest{Conv: conv}, &wire.Reply{}, 50); m > 50 {
			t.Fatalf("answer of %d tokens under max_tokens 50", m)
		}
	}
	if len(seen) < 25 {
		t.Errorf("50 conversations drew %d lengths; want them drawn, not fixed", len(seen))
	}
}

// TestGenerationPacesTheAnswerNotMaxTokens checks that a paced service
// takes the time of the tokens the answer has (Request.Generated), while
// its limits are charged max_tokens.
func TestGenerationPacesTheAnswerNotMaxTokens(t *testing.T) {
	m, err := NewModel(ServiceConfig{Config: spec.Config{Name: "llm", OutputTPM: 10_000,
		Generation: spec.Generation{TokensPerSecond: spec.Constant(100.0)}}}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	d := m.Arrive(0, Request{Tokens: 10, OutputTokens: 1000, Generated: 100})
	// 100 tokens at 100 per second: 1 s of generation, not 10.
	if gen := d.Latency - d.FirstToken; !d.Admitted() || gen != time.Second || d.Tokens != 1010 {
		t.Errorf("decision %+v: generation %v, want 1s, and 1010 tokens charged", d, gen)
	}
}
