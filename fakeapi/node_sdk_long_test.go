//go:build long

package fakeapi

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// The official Node SDKs of the Azure OpenAI and Gemini shapes, unchanged,
// against the server in real time (examples/node/sdk-*.mjs). They take a
// few seconds of waiting each (the SDKs' retries), so they run under make
// test-long. The counts that depend on how fast the machine is (how many
// requests came within a limit's window of the one before) are compared
// loosely; what does not (answers, completions, early retries) exactly.

// nodeSDKInstall is how to install what the Node SDK tests need.
const nodeSDKInstall = "apt-get install nodejs npm, then npm ci --prefix examples/node (make deps does both)"

// runNodeSDK runs examples/node/script with args and decodes the JSON line
// it prints into out. Without node or package pkg it skips, saying what to
// install, except in CI (CI=true), where it fails.
func runNodeSDK(t *testing.T, script, pkg string, out any, args ...string) {
	t.Helper()
	dir := filepath.Join("..", "examples", "node")
	missing := func(what string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %s", what, nodeSDKInstall)
		}
		t.Skipf("%s: %s", what, nodeSDKInstall)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg)); err != nil {
		missing("the Node package " + pkg + " is missing")
	}
	cmd := exec.Command(node, append([]string{filepath.Join(dir, script)}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("node %s printed %q: %v", script, b, err)
	}
}

// sdkService is a service of api admitting rps requests a second, one at a
// time (a bucket of one); text answers are 5 tokens.
func sdkService(name string, api spec.APIStyle, rps int64) ServiceConfig {
	return ServiceConfig{Config: spec.Config{Name: name, API: api, RPS: rps, Burst: 1, TPM: 10_000_000},
		Agent: AgentConfig{Answer: spec.Dist[float64]{Kind: spec.DistConstant, Value: 5}}}
}

// openai's AzureOpenAI: an answer, a stream, a tool call, and a 429 it
// retries after retry-after-ms, never early (it marks its retries with
// x-stainless-retry-count, so the server counts them exactly).
func TestLongNodeSDKAzure(t *testing.T) {
	s, _ := startServer(t, ServerConfig{Services: []ServiceConfig{sdkService("azure", spec.APIAzure, 1)}})
	var got struct {
		Pair             []string
		Answer, Streamed string
		Finish, Tool     string
		ToolArgs         string
	}
	runNodeSDK(t, "sdk-azure.mjs", "openai", &got, s.URL("azure"))
	want := strings.Join(wire.Answer(5), "")
	if len(got.Pair) != 2 || got.Pair[0] != want || got.Pair[1] != want || got.Answer != want || got.Streamed != want || got.Finish != "stop" {
		t.Errorf("answers %+v, want %q each", got, want)
	}
	if got.Tool != "search" || got.ToolArgs != `{"q":""}` {
		t.Errorf("tool call %s(%s), want search({\"q\":\"\"})", got.Tool, got.ToolArgs)
	}
	st := s.Stats().Services["azure"]
	// The pair came at once to one request a second: one of them, at
	// least, was told to wait.
	if st.Completed != 5 || st.RateLimited < 1 || st.EarlyRetries != 0 {
		t.Errorf("stats %+v: want 5 completed, a 429 or more, no early retry", st)
	}
	t.Logf("AzureOpenAI: %d requests, %d 429s, %d early retries", st.Arrived, st.RateLimited, st.EarlyRetries)
}

// @google/genai: an answer, a stream, a function call and a 429 it
// retries after its own backoff (1.5 s or more, past the 1 s asked: no
// early retry); on a service of one request a minute, its retry after the
// same backoff comes back within the minute the 429's RetryInfo asked
// for, and the server counts it early: the SDK does not read retryDelay.
func TestLongNodeSDKGemini(t *testing.T) {
	slow := sdkService("slow", spec.APIGemini, 0)
	slow.RPM = 1
	s, _ := startServer(t, ServerConfig{Services: []ServiceConfig{sdkService("gem", spec.APIGemini, 2), slow}})
	var got struct {
		Pair                     []string
		Answer, Streamed, Finish string
		Usage                    map[string]int64
		Tool                     string
		ToolArgs                 map[string]any
		SlowError                any
	}
	runNodeSDK(t, "sdk-gemini.mjs", "@google/genai", &got, s.URL("gem"), s.URL("slow"))
	want := strings.Join(wire.Answer(5), "")
	if len(got.Pair) != 2 || got.Pair[0] != want || got.Pair[1] != want || got.Answer != want || got.Streamed != want || got.Finish != "STOP" {
		t.Errorf("answers %+v, want %q each", got, want)
	}
	if got.Usage["candidatesTokenCount"] != 5 || got.Usage["totalTokenCount"] != got.Usage["promptTokenCount"]+5 {
		t.Errorf("usage %v", got.Usage)
	}
	if q, ok := got.ToolArgs["q"]; got.Tool != "search" || !ok || q != "" || len(got.ToolArgs) != 1 {
		t.Errorf("function call %s(%v), want search({q: \"\"})", got.Tool, got.ToolArgs)
	}
	st := s.Stats().Services["gem"]
	if st.Completed != 5 || st.RateLimited < 1 || st.EarlyRetries != 0 {
		t.Errorf("gem stats %+v: want 5 completed, a 429 or more, no early retry", st)
	}
	sl := s.Stats().Services["slow"]
	if got.SlowError != 429.0 || sl.Completed != 1 || sl.RateLimited != 2 || sl.EarlyRetries != 1 {
		t.Errorf("slow: error %v, stats %+v: want the SDK's one retry early, its 429 thrown", got.SlowError, sl)
	}
	t.Logf("@google/genai: %d requests, %d 429s, %d early retries; a minute's delay: %d 429s, %d early", st.Arrived, st.RateLimited, st.EarlyRetries, sl.RateLimited, sl.EarlyRetries)
}
