package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/simbench/simbench/fakeapi"
)

// agentScenario is a scenario whose sessions make 3 turns of a model call
// and 4 searches each; the model speaks the given header style.
const agentScenario = `
name = "agent-loop"
description = "an agent loop: 3 turns of 4 parallel searches"
seed = 3
duration = "1m"

[workload]
sessions = 1
turns = 3
llm = { service = "llm", tokens = 500 }
calls = [ { tool = "search", count = 4 } ]

[services.llm]
rpm = 600
tpm = 1_000_000
headers = "%s"

[services.web]
rpm = 600
max_concurrent = 8
latency = { dist = "constant", value = "100ms" }
headers = "standard"

[tools.search]
service = "web"
tokens = 0

[[strategy]]
name = "unbounded"
`

// servedAgent runs serve on the agent scenario in process and returns
// what it printed and the server; serve stops when the test ends.
func servedAgent(t *testing.T, headers string) (string, *fakeapi.Server) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(file, []byte(strings.Replace(agentScenario, "%s", headers, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *fakeapi.Server, 1)
	var out bytes.Buffer
	cmd := &ServeCmd{Scenario: file, serveFlags: serveFlags{Addr: "127.0.0.1:0"}, Stdout: &out, Stderr: io.Discard, parent: ctx, ready: ready}
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	var srv *fakeapi.Server
	select {
	case srv = <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	printed := out.String() // complete: the summary is printed before the server is handed over
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return printed, srv
}

// printed finds the first submatch of pattern in serve's output.
func printed(t *testing.T, out, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("serve printed no %s:\n%s", pattern, out)
	}
	return m[1]
}

// searchArgs is the arguments the fake model gives the search tool's call
// at index i of one answer: the schema's smallest valid object (an empty
// query, top_k at its minimum of 1) for the first, and for each later one
// the first required string set to its index, so that the parallel calls
// of one answer differ, as a model's do.
func searchArgs(i int) string {
	q := ""
	if i > 0 {
		q = strconv.Itoa(i)
	}
	return fmt.Sprintf(`{"query":%q,"top_k":1}`, q)
}

// agentTool runs tool calls against the tool URL serve printed, counting
// the calls in flight at once.
type agentTool struct {
	t              *testing.T
	url            string
	inFlight, peak atomic.Int64
}

func (a *agentTool) call(args string) string {
	n := a.inFlight.Add(1)
	defer a.inFlight.Add(-1)
	for p := a.peak.Load(); n > p && !a.peak.CompareAndSwap(p, n); p = a.peak.Load() {
	}
	res, err := http.Post(a.url, "application/json", strings.NewReader(args))
	if err != nil {
		a.t.Error(err)
		return err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		a.t.Errorf("tool call: %d %s", res.StatusCode, b)
	}
	return string(b)
}

// searchSchema is the search tool's input schema.
var searchSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"query": map[string]any{"type": "string"}, "top_k": map[string]any{"type": "integer", "minimum": 1}},
	"required":   []string{"query", "top_k"},
}

// checkAgentRun checks an agent loop's turns against the scenario (3 turns
// of 4 calls, then an answer) and the tool service's accounting.
func checkAgentRun(t *testing.T, srv *fakeapi.Server, tool *agentTool, fanouts []int, answer string) {
	t.Helper()
	if len(fanouts) != 3 || answer == "" {
		t.Fatalf("turns with %v tool calls, answer %q: want 3 turns of 4, then an answer", fanouts, answer)
	}
	for _, n := range fanouts {
		if n != 4 {
			t.Fatalf("turns with %v tool calls: want 4 each", fanouts)
		}
	}
	st := srv.Stats().Services
	if st["web"].Completed != 12 || st["web"].PeakConcurrency < 4 || tool.peak.Load() < 4 || st["web"].WriteRaces != 0 {
		t.Fatalf("web %+v, peak %d in flight at the client: want 12 searches, 4 at once", st["web"], tool.peak.Load())
	}
	if st["llm"].Completed != 4 || st["llm"].RateLimited != 0 {
		t.Fatalf("llm %+v: want 4 model calls", st["llm"])
	}
}

func TestServeAgentLoopOpenAISDK(t *testing.T) {
	out, srv := servedAgent(t, "openai")
	base := printed(t, out, `OPENAI_BASE_URL=(\S+)\)`)
	tool := &agentTool{t: t, url: printed(t, out, `search\s+(http://\S+/tools/search)`)}
	client := openai.NewClient(option.WithBaseURL(base), option.WithAPIKey("sk-test"))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModel("gpt-4o-mini"),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Compare the three largest cities of Japan.")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "search", Description: openai.String("Search the web"), Parameters: searchSchema,
		})},
	}
	// The loop as the SDK documents it: send, run every tool call, send the
	// results back, until the model answers without tool calls.
	var fanouts []int
	var answer string
	for turn := 0; turn < 10; turn++ {
		completion, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		msg := completion.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			answer = msg.Content
			if completion.Choices[0].FinishReason != "stop" {
				t.Fatalf("answer with finish reason %q", completion.Choices[0].FinishReason)
			}
			break
		}
		fanouts = append(fanouts, len(msg.ToolCalls))
		params.Messages = append(params.Messages, msg.ToParam())
		results := make([]string, len(msg.ToolCalls))
		var wg sync.WaitGroup
		for i, tc := range msg.ToolCalls {
			if tc.Function.Name != "search" || tc.Function.Arguments != searchArgs(i) {
				t.Fatalf("tool call %d: %+v; want arguments %s", i, tc, searchArgs(i))
			}
		}
		for i, tc := range msg.ToolCalls {
			wg.Go(func() { results[i] = tool.call(tc.Function.Arguments) })
		}
		wg.Wait()
		for i, tc := range msg.ToolCalls {
			params.Messages = append(params.Messages, openai.ToolMessage(results[i], tc.ID))
		}
	}
	checkAgentRun(t, srv, tool, fanouts, answer)
}

func TestServeAgentLoopAnthropicSDK(t *testing.T) {
	out, srv := servedAgent(t, "anthropic")
	base := printed(t, out, `ANTHROPIC_BASE_URL=(\S+)\)`)
	tool := &agentTool{t: t, url: printed(t, out, `search\s+(http://\S+/tools/search)`)}
	client := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey("sk-ant-test"))
	ctx := context.Background()
	search := anthropic.ToolParam{Name: "search", Description: anthropic.String("Search the web"),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: searchSchema["properties"], Required: []string{"query", "top_k"}}}
	messages := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Compare the three largest cities of Japan."))}
	var fanouts []int
	var answer string
	for turn := 0; turn < 10; turn++ {
		stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
			Model: anthropic.Model("claude-sonnet-4-5"), MaxTokens: 1024, Messages: messages,
			Tools: []anthropic.ToolUnionParam{{OfTool: &search}},
		})
		var msg anthropic.Message
		for stream.Next() {
			if err := msg.Accumulate(stream.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		messages = append(messages, msg.ToParam())
		var uses []anthropic.ToolUseBlock
		for _, b := range msg.Content {
			switch b.Type {
			case "tool_use":
				uses = append(uses, b.AsToolUse())
			case "text":
				answer += b.Text
			}
		}
		if len(uses) == 0 {
			if msg.StopReason != anthropic.StopReasonEndTurn {
				t.Fatalf("answer with stop reason %q", msg.StopReason)
			}
			break
		}
		fanouts = append(fanouts, len(uses))
		results := make([]anthropic.ContentBlockParamUnion, len(uses))
		var wg sync.WaitGroup
		for i, u := range uses {
			if u.Name != "search" || string(u.Input) != searchArgs(i) {
				t.Fatalf("tool use %d: %+v; want input %s", i, u, searchArgs(i))
			}
		}
		for i, u := range uses {
			wg.Go(func() { results[i] = anthropic.NewToolResultBlock(u.ID, tool.call(string(u.Input)), false) })
		}
		wg.Wait()
		messages = append(messages, anthropic.NewUserMessage(results...))
	}
	checkAgentRun(t, srv, tool, fanouts, answer)
}
