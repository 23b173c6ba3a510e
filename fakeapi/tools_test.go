package fakeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

func toolBody(first string, extra string) string {
	return `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"` + first + `"}],` +
		`"tools":[{"type":"function","function":{"name":"search","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}},` +
		`{"type":"function","function":{"name":"fetch","parameters":{"type":"object","properties":{"url":{"type":"string","minLength":1}},"required":["url"]}}}]` + extra + `}`
}

// toolCallsOf returns the names and arguments of a chat completion's tool
// calls, and its finish reason.
func toolCallsOf(t *testing.T, r response) (names, args []string, finish string) {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %v", r.status, r.body)
	}
	choice := r.body["choices"].([]any)[0].(map[string]any)
	msg := choice["message"].(map[string]any)
	calls, _ := msg["tool_calls"].([]any)
	for _, c := range calls {
		f := c.(map[string]any)["function"].(map[string]any)
		names = append(names, f["name"].(string))
		args = append(args, f["arguments"].(string))
	}
	return names, args, choice["finish_reason"].(string)
}

func TestServeToolChoice(t *testing.T) {
	five := func(*rand.Rand) int { return 5 }
	zero := func(*rand.Rand) int { return 0 }
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{
		{Config: spec.Config{Name: "five", TPM: 10_000_000}, Agent: AgentConfig{Calls: five, MaxIterations: 4}},
		{Config: spec.Config{Name: "zero", TPM: 10_000_000}, Agent: AgentConfig{Calls: zero, MaxIterations: 4}},
		{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, TPM: 10_000_000}, Agent: AgentConfig{Calls: five, MaxIterations: 4}},
	}})
	chat := func(service, extra string) response {
		return do(t, c, "POST", s.SDKBaseURL(service)+"/chat/completions", toolBody("q", extra))
	}
	tests := []struct {
		name, service, extra string
		wantCalls            int
		wantNames            string // "" or the one name every call has
		wantFinish           string
	}{
		{"auto", "five", ``, 5, "", "tool_calls"},
		{"none", "five", `,"tool_choice":"none"`, 0, "", "stop"},
		{"named", "five", `,"tool_choice":{"type":"function","function":{"name":"fetch"}}`, 5, "fetch", "tool_calls"},
		{"not parallel", "five", `,"parallel_tool_calls":false`, 1, "", "tool_calls"},
		{"no calls drawn", "zero", ``, 0, "", "stop"},
		{"no calls drawn but required", "zero", `,"tool_choice":"required"`, 1, "", "tool_calls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			names, args, finish := toolCallsOf(t, chat(tt.service, tt.extra))
			if len(names) != tt.wantCalls || finish != tt.wantFinish {
				t.Fatalf("%d calls %v, finish %q; want %d, %q", len(names), names, finish, tt.wantCalls, tt.wantFinish)
			}
			for i, n := range names {
				// The minimal arguments first, then each call its index.
				want := map[string]string{"search": `{"q":""}`, "fetch": `{"url":"a"}`}[n]
				if i > 0 {
					want = map[string]string{"search": fmt.Sprintf(`{"q":"%d"}`, i), "fetch": fmt.Sprintf(`{"url":"%d"}`, i)}[n]
				}
				if (tt.wantNames != "" && n != tt.wantNames) || args[i] != want {
					t.Fatalf("call %d: %s(%s)", i, n, args[i])
				}
			}
		})
	}
	if r := chat("five", `,"tool_choice":{"type":"function","function":{"name":"nope"}}`); r.status != 400 {
		t.Errorf("a tool_choice naming a missing tool: %d", r.status)
	}
	// Anthropic's dialect: any, tool, none and disable_parallel_tool_use.
	for _, tt := range []struct {
		choice string
		want   int
	}{{`{"type":"auto"}`, 5}, {`{"type":"any","disable_parallel_tool_use":true}`, 1}, {`{"type":"tool","name":"search"}`, 5}, {`{"type":"none"}`, 0}} {
		r := do(t, c, "POST", s.SDKBaseURL("claude")+"/v1/messages", `{"model":"m","max_tokens":50,"messages":[{"role":"user","content":"q"}],`+
			`"tools":[{"name":"search","input_schema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}},{"type":"web_search_20250305","name":"web_search"}],"tool_choice":`+tt.choice+`}`)
		content, _ := r.body["content"].([]any)
		uses := 0
		for _, b := range content {
			if m := b.(map[string]any); m["type"] == "tool_use" {
				uses++
				if m["name"] != "search" || !strings.HasPrefix(m["id"].(string), "toolu_") {
					t.Fatalf("%s: block %v", tt.choice, m)
				}
			}
		}
		wantStop := "tool_use"
		if tt.want == 0 {
			wantStop = "max_tokens" // the drawn text answer, cut at max_tokens 50
		}
		if r.status != 200 || uses != tt.want || r.body["stop_reason"] != wantStop {
			t.Fatalf("%s: %d, %d tool_use blocks, %v", tt.choice, r.status, uses, r.body)
		}
	}
}

// chatHistory is a chat completion request of conversation first after
// rounds of tool calls, each answered: the assistant message with the calls
// and a tool message per call.
func chatHistory(first string, rounds [][]string) string {
	var extra strings.Builder
	for _, ids := range rounds {
		extra.WriteString(`,{"role":"assistant","content":null,"tool_calls":[`)
		for i, id := range ids {
			if i > 0 {
				extra.WriteString(",")
			}
			extra.WriteString(`{"id":"` + id + `","type":"function","function":{"name":"search","arguments":"{}"}}`)
		}
		extra.WriteString(`]}`)
		for _, id := range ids {
			extra.WriteString(`,{"role":"tool","tool_call_id":"` + id + `","content":"ok"}`)
		}
	}
	b := toolBody(first, "")
	i := strings.Index(b, `}],"tools"`)
	return b[:i+1] + extra.String() + b[i+1:]
}

// callIDs returns the ids of a chat completion's tool calls.
func callIDs(r response) []string {
	var ids []string
	msg := r.body["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	calls, _ := msg["tool_calls"].([]any)
	for _, c := range calls {
		ids = append(ids, c.(map[string]any)["id"].(string))
	}
	return ids
}

func TestServeAgentIterationsDeterministic(t *testing.T) {
	// Each response makes 1 to 6 calls; conversations last 1 to 8
	// iterations, ending by chance after each with probability 0.3.
	agent := AgentConfig{Calls: func(r *rand.Rand) int { return 1 + r.IntN(6) }, MaxIterations: 8, FinishProbability: 0.3}
	run := func(seed uint64, first string) [][]string {
		s, c := startServer(t, ServerConfig{Seed: seed, Services: []ServiceConfig{{Config: spec.Config{Name: "llm", TPM: 50_000_000}, Agent: agent}}})
		var rounds [][]string
		for {
			r := do(t, c, "POST", s.SDKBaseURL("llm")+"/chat/completions", chatHistory(first, rounds))
			ids := callIDs(r)
			if len(ids) == 0 {
				if _, _, finish := toolCallsOf(t, r); finish != "stop" {
					t.Fatalf("finish %q without calls", finish)
				}
				return rounds
			}
			rounds = append(rounds, ids)
			if len(rounds) > 8 {
				t.Fatalf("more than MaxIterations rounds: %v", rounds)
			}
		}
	}
	a := run(1, "plan a trip")
	if b := run(1, "plan a trip"); !equalRounds(a, b) {
		t.Fatalf("one seed and conversation, two runs: %v and %v", a, b)
	}
	// Other conversations and seeds go otherwise: over a few of them the
	// iterations and fan-outs vary.
	lengths, fanouts := map[int]bool{}, map[int]bool{}
	for i := range 12 {
		for _, ids := range run(uint64(i), "question "+string(rune('a'+i))) {
			fanouts[len(ids)] = true
		}
		lengths[len(run(1, "question "+string(rune('a'+i))))] = true
	}
	if len(lengths) < 2 || len(fanouts) < 3 {
		t.Fatalf("iterations %v, fan-outs %v: want them drawn per conversation", lengths, fanouts)
	}
}

func equalRounds(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], ",") != strings.Join(b[i], ",") {
			return false
		}
	}
	return true
}

func TestServeChatToolCallsStreamedOpenAISDK(t *testing.T) {
	s, _ := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "llm", TPM: 1_000_000},
		Agent: AgentConfig{Calls: func(*rand.Rand) int { return 4 }}}}})
	client := openai.NewClient(option.WithBaseURL(s.SDKBaseURL("llm")), option.WithAPIKey("sk-test"))
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    openai.ChatModel("gpt-4o-mini"),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("look it up")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:       "lookup",
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer", "minimum": 3}}, "required": []string{"id"}},
		})},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	finished := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		if _, ok := acc.JustFinishedToolCall(); ok {
			finished++
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	msg := acc.Choices[0].Message
	if len(msg.ToolCalls) != 4 || acc.Choices[0].FinishReason != "tool_calls" || acc.Usage.CompletionTokens != spec.DefaultOutputTokens || finished < 3 {
		t.Fatalf("accumulated %+v, %d finished calls", acc.ChatCompletion, finished)
	}
	seen := map[string]bool{}
	for i, tc := range msg.ToolCalls {
		// The minimum, then each parallel call its index above it.
		if tc.Function.Name != "lookup" || tc.Function.Arguments != fmt.Sprintf(`{"id":%d}`, 3+i) || seen[tc.ID] {
			t.Fatalf("tool call %+v", tc)
		}
		seen[tc.ID] = true
	}
}

// TestDecideCallsParallelDiffer holds the parallel tool calls of one
// answer to different arguments: two calls of one tool with the same
// arguments would be one request sent twice, which check grades as a
// retry. The answer's first call keeps the minimal arguments.
func TestDecideCallsParallelDiffer(t *testing.T) {
	tools := []wire.ToolSpec{
		{Name: "search", Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)},
		{Name: "fetch", Schema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","minLength":1}},"required":["url"]}`)},
	}
	a := &AgentConfig{MaxIterations: 3, Calls: func(*rand.Rand) int { return 8 }}
	for conv := range uint64(20) {
		for round := range 3 {
			req := &wire.AgentRequest{Tools: tools, Mode: wire.ChoiceAuto, Parallel: true, Conv: conv, Round: round}
			r := decideCalls(a, 1, req, "sb")
			if len(r.Calls) != 8 {
				t.Fatalf("conv %d round %d: %d calls, want 8", conv, round, len(r.Calls))
			}
			seen := map[string]int{}
			for i, c := range r.Calls {
				key := c.Name + " " + string(c.Args)
				if j, ok := seen[key]; ok {
					t.Fatalf("conv %d round %d: calls %d and %d are both %s", conv, round, j, i, key)
				}
				seen[key] = i
			}
			first := r.Calls[0]
			for _, x := range tools {
				if x.Name == first.Name && string(first.Args) != string(wire.MinimalArgs(x.Schema)) {
					t.Errorf("conv %d round %d: first call %s %s, want the minimal arguments %s", conv, round, first.Name, first.Args, wire.MinimalArgs(x.Schema))
				}
			}
		}
	}
}
