package fakeapi

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// searchTool is a function tool for the Responses API whose schema needs a
// query and a limit of at least 1.
func searchTool() responses.ToolUnionParam {
	return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name: "search",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query": map[string]any{"type": "string"},
				"limit": map[string]any{"type": "integer", "minimum": 1},
				"mode":  map[string]any{"type": "string", "enum": []any{"fast", "deep"}},
			},
			"required": []any{"query", "limit", "mode"},
		},
	}}
}

const searchArgs = `{"query":"","limit":1,"mode":"fast"}`

func TestServeResponsesStreamedWhole(t *testing.T) {
	s, _ := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "llm", RPM: 60, TPM: 100_000}}}})
	client := openai.NewClient(option.WithBaseURL(s.SDKBaseURL("llm")), option.WithAPIKey("sk-test"))
	stream := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model:           openai.ChatModel("gpt-4o-mini"),
		Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the capital of France?")},
		MaxOutputTokens: openai.Int(9),
	})
	var types []string
	var text strings.Builder
	var done *responses.Response
	seq := int64(0)
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if ev.SequenceNumber != seq {
			t.Fatalf("event %d %s has sequence number %d", seq, ev.Type, ev.SequenceNumber)
		}
		seq++
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed", "response.incomplete":
			r := ev.Response
			done = &r
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	// The drawn answer (median 200 tokens) stops at max_output_tokens 9.
	want := "response.created response.in_progress response.output_item.added response.content_part.added" +
		strings.Repeat(" response.output_text.delta", 9) +
		" response.output_text.done response.content_part.done response.output_item.done response.incomplete"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
	full := strings.Join(wire.Answer(9), "")
	if done == nil || text.String() != full || done.OutputText() != full || done.Status != "incomplete" ||
		done.IncompleteDetails.Reason != "max_output_tokens" || done.Output[0].Status != "incomplete" {
		t.Fatalf("text %q, incomplete %+v", text.String(), done)
	}
	if u := done.Usage; u.OutputTokens != 9 || u.InputTokens <= 0 || u.TotalTokens != u.InputTokens+9 {
		t.Fatalf("usage %+v", u)
	}
	st := s.Stats().Services["llm"]
	if st.Completed != 1 || st.TokensAccepted != done.Usage.TotalTokens {
		t.Fatalf("stats %+v: want the response's usage accounted", st)
	}
}

func TestServeResponsesNotStreamed(t *testing.T) {
	s, _ := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "llm", RPM: 1, TPM: 100_000}}}})
	client := openai.NewClient(option.WithBaseURL(s.SDKBaseURL("llm")), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	params := responses.ResponseNewParams{
		Model: openai.ChatModel("gpt-4o-mini"),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
	}
	r, err := client.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if r.OutputText() != strings.Join(wire.Answer(spec.DefaultOutputTokens), "") || r.Usage.OutputTokens != spec.DefaultOutputTokens || r.Model != string(openai.ChatModel("gpt-4o-mini")) {
		t.Fatalf("response %+v", r)
	}
	// Limits apply as to chat completions: the second call in the minute is
	// refused before anything is generated.
	_, err = client.Responses.New(context.Background(), params)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 {
		t.Fatalf("second call: %v, want 429", err)
	}
	if st := s.Stats().Services["llm"]; st.Completed != 1 || st.RateLimited != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestServeResponsesToolCalls(t *testing.T) {
	calls := func(*rand.Rand) int { return 3 }
	s, _ := startServer(t, ServerConfig{Seed: 5, Services: []ServiceConfig{{Config: spec.Config{Name: "llm", TPM: 1_000_000},
		Agent: AgentConfig{Calls: calls, MaxIterations: 2}}}})
	client := openai.NewClient(option.WithBaseURL(s.SDKBaseURL("llm")), option.WithAPIKey("sk-test"))
	ctx := context.Background()
	params := responses.ResponseNewParams{
		Model: openai.ChatModel("gpt-4o-mini"),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("find things")},
		Tools: []responses.ToolUnionParam{searchTool()},
	}
	// Streamed: each call arrives as output_item.added, argument deltas,
	// arguments done and output_item.done.
	stream := client.Responses.NewStreaming(ctx, params)
	args := map[string]string{}
	var first *responses.Response
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.function_call_arguments.delta":
			args[ev.ItemID] += ev.Delta
		case "response.function_call_arguments.done":
			if args[ev.ItemID] != ev.Arguments {
				t.Fatalf("deltas %q, done %q", args[ev.ItemID], ev.Arguments)
			}
		case "response.completed":
			r := ev.Response
			first = &r
		}
	}
	if err := stream.Err(); err != nil || first == nil {
		t.Fatal(err)
	}
	if len(first.Output) != 3 || len(args) != 3 {
		t.Fatalf("output %+v, args %v: want 3 function calls", first.Output, args)
	}
	var outputs []responses.ResponseInputItemUnionParam
	for i, item := range first.Output {
		// The minimal arguments, then each parallel call its index in
		// the first string property.
		want := searchArgs
		if i > 0 {
			want = fmt.Sprintf(`{"query":"%d","limit":1,"mode":"fast"}`, i)
		}
		fc := item.AsFunctionCall()
		if item.Type != "function_call" || fc.Name != "search" || fc.Arguments != want || args[fc.ID] != want || fc.CallID == "" {
			t.Fatalf("item %+v", item)
		}
		out := responses.ResponseInputItemParamOfFunctionCallOutput("3 results")
		out.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
		outputs = append(outputs, out)
	}
	// The results sent back with previous_response_id: the second of two
	// iterations calls tools again, not streamed this time.
	second, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: openai.ChatModel("gpt-4o-mini"), PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: outputs},
		Tools: []responses.ToolUnionParam{searchTool()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Output) != 3 || second.Output[0].Type != "function_call" || second.Output[0].CallID == first.Output[0].CallID {
		t.Fatalf("second response %+v: want 3 new calls", second.Output)
	}
	outputs = outputs[:0]
	for _, item := range second.Output {
		out := responses.ResponseInputItemParamOfFunctionCallOutput("none")
		out.OfFunctionCallOutput.CallID = openai.String(item.CallID)
		outputs = append(outputs, out)
	}
	third, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: openai.ChatModel("gpt-4o-mini"), PreviousResponseID: openai.String(second.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: outputs},
		Tools: []responses.ToolUnionParam{searchTool()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(third.Output) != 1 || third.Output[0].Type != "message" || third.OutputText() == "" {
		t.Fatalf("third response %+v: want the answer after two iterations", third.Output)
	}
	// The whole history sent again, without previous_response_id, continues
	// the same conversation the same way.
	var history responses.ResponseInputParam
	history = append(history, responses.ResponseInputItemParamOfMessage("find things", responses.EasyInputMessageRoleUser))
	for _, item := range first.Output {
		fc := item.AsFunctionCall().ToParam()
		history = append(history, responses.ResponseInputItemUnionParam{OfFunctionCall: &fc})
		out := responses.ResponseInputItemParamOfFunctionCallOutput("3 results")
		out.OfFunctionCallOutput.CallID = openai.String(item.CallID)
		history = append(history, out)
	}
	again, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: openai.ChatModel("gpt-4o-mini"), Input: responses.ResponseNewParamsInputUnion{OfInputItemList: history},
		Tools: []responses.ToolUnionParam{searchTool()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Output) != 3 || again.Output[0].CallID != second.Output[0].CallID {
		t.Fatalf("replayed history: %+v, want the second round's calls %+v", again.Output, second.Output)
	}
	if args := second.Output[0].AsFunctionCall().Arguments; args != searchArgs {
		t.Fatalf("second round's arguments %s", args)
	}
}

// TestServeResponsesStatusAtMaxOutputTokens checks, through the official
// SDK, that a response of 5 tokens under max_output_tokens 9 is
// completed, and one cut at max_output_tokens 3 incomplete with reason
// max_output_tokens; either way its text is as many tokens as its usage.
func TestServeResponsesStatusAtMaxOutputTokens(t *testing.T) {
	s, _ := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "llm"},
		Agent: AgentConfig{Answer: spec.Constant(5.0)}}}})
	client := openai.NewClient(option.WithBaseURL(s.SDKBaseURL("llm")), option.WithAPIKey("sk-test"))
	for _, tc := range []struct {
		max          int64
		status, why  string
		outputTokens int64
	}{{9, "completed", "", 5}, {3, "incomplete", "max_output_tokens", 3}} {
		r, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
			Model: openai.ChatModel("gpt-4o-mini"), Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
			MaxOutputTokens: openai.Int(tc.max),
		})
		if err != nil {
			t.Fatal(err)
		}
		n, ok := countTokens(r.OutputText())
		if string(r.Status) != tc.status || r.IncompleteDetails.Reason != tc.why || r.Usage.OutputTokens != tc.outputTokens || !ok || n != tc.outputTokens {
			t.Errorf("max_output_tokens %d: status %q (%q), usage %d, text %q; want %q (%q) and %d tokens",
				tc.max, r.Status, r.IncompleteDetails.Reason, r.Usage.OutputTokens, r.OutputText(), tc.status, tc.why, tc.outputTokens)
		}
	}
}
