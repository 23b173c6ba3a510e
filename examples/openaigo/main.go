// Command openaigo is an agent loop written with the official openai-go
// SDK as its documentation shows it: send the conversation, run every tool
// call the model makes at once, send the results back, until the model
// answers in text. The SDK's own retries (2, with backoff, honouring
// Retry-After) are all the care it takes. Run it under check to grade it:
//
//	simbench check tier3 -- go run ./examples/openaigo -sessions 4
//
// It talks to OPENAI_BASE_URL with OPENAI_API_KEY (check sets both) and
// runs the tool calls against SIMBENCH_TOOL_URL_<TOOL>. Each session sends
// its own X-Simbench-Client, so check grades every conversation apart.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

func main() {
	sessions := flag.Int("sessions", 4, "conversations running at once")
	tool := flag.String("tool", "lookup", "the tool the model may call: its URL is SIMBENCH_TOOL_URL_<TOOL>")
	maxRounds := flag.Int("max-rounds", 10, "the most model calls of one conversation")
	flag.Parse()
	url := os.Getenv("SIMBENCH_TOOL_URL_" + strings.ToUpper(*tool))
	if url == "" || os.Getenv("OPENAI_BASE_URL") == "" {
		fmt.Fprintf(os.Stderr, "openaigo: OPENAI_BASE_URL or SIMBENCH_TOOL_URL_%s is not set; run me under simbench check\n", strings.ToUpper(*tool))
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var answered, failed atomic.Int64
	var wg sync.WaitGroup
	for s := range *sessions {
		wg.Go(func() {
			if err := converse(ctx, fmt.Sprint("session-", s), *tool, url, *maxRounds); err != nil {
				fmt.Fprintf(os.Stderr, "openaigo: session %d: %v\n", s, err)
				failed.Add(1)
				return
			}
			answered.Add(1)
		})
	}
	wg.Wait()
	fmt.Printf("openaigo: %d conversations answered, %d failed\n", answered.Load(), failed.Load())
	if failed.Load() > 0 {
		os.Exit(1)
	}
}

// converse runs one conversation to its text answer.
func converse(ctx context.Context, session, tool, url string, maxRounds int) error {
	// The SDK reads OPENAI_BASE_URL and OPENAI_API_KEY itself.
	client := openai.NewClient(option.WithHeader("X-Simbench-Client", session))
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModel("gpt-4o-mini"),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Look up what I need for my trip.")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: tool, Description: openai.String("Look something up"),
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}, "required": []string{"q"}},
		})},
	}
	for range maxRounds {
		completion, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return err
		}
		msg := completion.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			return nil
		}
		params.Messages = append(params.Messages, msg.ToParam())
		results := make([]string, len(msg.ToolCalls))
		var wg sync.WaitGroup
		for i, tc := range msg.ToolCalls {
			wg.Go(func() { results[i] = callTool(ctx, url, session, tc.Function.Arguments) })
		}
		wg.Wait()
		for i, tc := range msg.ToolCalls {
			params.Messages = append(params.Messages, openai.ToolMessage(results[i], tc.ID))
		}
	}
	return fmt.Errorf("no answer after %d model calls", maxRounds)
}

// callTool posts a tool call's arguments to url, once, and returns the
// answer or the error as the tool's result.
func callTool(ctx context.Context, url, session, args string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(args)))
	if err != nil {
		return "error: " + err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+os.Getenv("OPENAI_API_KEY"))
	req.Header.Set("X-Simbench-Client", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Sprintf("error: status %d", resp.StatusCode)
	}
	return string(b)
}
