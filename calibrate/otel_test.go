package calibrate

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/simbench/simbench/scenarios"
)

// otelAttr builds an OTLP/JSON attribute; ints are strings, as OTLP/JSON
// writes 64-bit integers.
func otelAttr(k string, v any) map[string]any {
	switch v := v.(type) {
	case int:
		return map[string]any{"key": k, "value": map[string]any{"intValue": fmt.Sprint(v)}}
	default:
		return map[string]any{"key": k, "value": map[string]any{"stringValue": v}}
	}
}

// otelFixture writes an OTLP/JSON export of an agent: conversations of
// several turns; each turn an invoke_agent span holding a chat span and,
// as its children, fanOut execute_tool spans (searches on one service, a
// fetch on another). Spans are written children first, as exporters
// batch them when they end, so parents come after their children.
func otelFixture(t *testing.T, path string, conversations, turns, fanOut int) {
	rng := rand.New(rand.NewPCG(11, 12))
	var spans []map[string]any
	id := 0
	next := func() string { id++; return fmt.Sprintf("%016x", id) }
	ns := func(s float64) string { return fmt.Sprint(int64(1_700_000_000e9 + s*1e9)) }
	for conv := range conversations {
		traceID := fmt.Sprintf("%032x", conv+1)
		now := float64(conv) * 0.1
		for range turns {
			agent := next()
			chat := next()
			chatEnd := now + 0.5 + rng.Float64()
			var children []map[string]any
			end := chatEnd
			for c := range fanOut {
				tool, server, status := "search", "search.example.com", 200
				if c == fanOut-1 {
					tool, server = "fetch", "db.internal"
				}
				if c == 0 && rng.IntN(10) == 0 {
					status = 429
				}
				s := chatEnd + 0.01*float64(c)
				e := s + 0.1 + 0.3*rng.Float64()
				end = max(end, e)
				children = append(children, map[string]any{
					"traceId": traceID, "spanId": next(), "parentSpanId": agent, "name": "execute_tool " + tool,
					"startTimeUnixNano": ns(s), "endTimeUnixNano": ns(e),
					"attributes": []any{otelAttr("gen_ai.operation.name", "execute_tool"), otelAttr("gen_ai.tool.name", tool),
						otelAttr("server.address", server), otelAttr("http.response.status_code", status)},
				})
			}
			spans = append(spans, children...)
			spans = append(spans, map[string]any{
				"traceId": traceID, "spanId": chat, "parentSpanId": agent, "name": "chat gpt-4o",
				"startTimeUnixNano": ns(now), "endTimeUnixNano": ns(chatEnd),
				"attributes": []any{otelAttr("gen_ai.operation.name", "chat"), otelAttr("server.address", "api.openai.com"),
					otelAttr("gen_ai.usage.input_tokens", 1200), otelAttr("gen_ai.usage.output_tokens", 300),
					otelAttr("gen_ai.conversation.id", fmt.Sprintf("conv-%d", conv))},
				"status": map[string]any{"code": 1},
			}, map[string]any{
				"traceId": traceID, "spanId": agent, "name": "invoke_agent researcher",
				"startTimeUnixNano": ns(now), "endTimeUnixNano": ns(end),
				"attributes": []any{otelAttr("gen_ai.operation.name", "invoke_agent")},
			}, map[string]any{ // an HTTP span that is not GenAI: skipped
				"traceId": traceID, "spanId": next(), "parentSpanId": chat, "name": "POST",
				"startTimeUnixNano": ns(now), "endTimeUnixNano": ns(chatEnd),
			})
			now = end + 1 + rng.Float64()
		}
	}
	doc := map[string]any{"resourceSpans": []any{map[string]any{
		"resource":   map[string]any{"attributes": []any{otelAttr("service.name", "agent")}},
		"scopeSpans": []any{map[string]any{"scope": map[string]any{"name": "genai"}, "spans": spans}},
	}}}
	data, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOTelCalibrates calibrates an OpenTelemetry export with GenAI
// attributes into a scenario with its three services and fan-out.
func TestOTelCalibrates(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "spans.json")
	const conversations, turns, fanOut = 6, 10, 5
	otelFixture(t, in, conversations, turns, fanOut)
	c := New(Options{})
	if err := c.ReadFile(in, ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Fit()
	if err != nil {
		t.Fatal(err)
	}
	src := res.Sources[0]
	if src.Format != FormatOTel || src.Records != conversations*turns*(fanOut+1) || src.Skipped != 2*conversations*turns {
		t.Errorf("source %+v; want otel, %d attempts, %d skipped", src, conversations*turns*(fanOut+1), 2*conversations*turns)
	}
	wl := res.Workload
	if wl.Turns != conversations*turns || wl.FanOutMin != fanOut || wl.FanOutMax != fanOut || !wl.Closed || wl.SessionsSeen != conversations {
		t.Errorf("workload: %d turns, fan-out %d..%d, closed %v, %d sessions; want %d, %d, closed, %d", wl.Turns, wl.FanOutMin, wl.FanOutMax, wl.Closed, wl.SessionsSeen, conversations*turns, fanOut, conversations)
	}
	if wl.ModelTurnShare != 1 || wl.ModelService != "api.openai.com" || wl.ModelTokensMean != 1500 {
		t.Errorf("model calls: share %v, service %q, tokens %v", wl.ModelTurnShare, wl.ModelService, wl.ModelTokensMean)
	}
	out := filepath.Join(dir, "agent.toml")
	if _, err := res.WriteScenario(out); err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range sc.Services {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"api.openai.com", "db.internal", "search.example.com"}) {
		t.Errorf("services %q", names)
	}
	g := sc.Workload.Calls[0]
	if g.Count.Value != fanOut || len(g.Mix) != 2 || g.Mix[0].Tool != "fetch" || g.Mix[0].Weight*(fanOut-1) != g.Mix[1].Weight {
		t.Errorf("calls %+v; want %d calls a turn, fetch and search 1:%d", g, fanOut, fanOut-1)
	}
	if sc.Workload.LLM == nil || sc.Workload.LLM.Service != "api.openai.com" || sc.Workload.LLM.Tokens.Value != 1500 {
		t.Errorf("llm %+v", sc.Workload.LLM)
	}
	if sc.Tool("search").Service != "search.example.com" || sc.Tool("fetch").Service != "db.internal" {
		t.Errorf("tools %+v", sc.Tools)
	}
	if s := sc.Service("search.example.com"); s.RequestsPerMinute == 0 {
		t.Errorf("search: 429s were seen but no limit was inferred: %+v", s)
	}
}
