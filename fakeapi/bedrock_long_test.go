//go:build long

package fakeapi

import (
	"strings"
	"testing"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// @aws-sdk/client-bedrock-runtime: an answer, a ConverseStream read from
// its AWS event stream, a tool call and a 429 it
// retries, on a service with Bedrock's own headers (none) and on one that
// sends Retry-After. Without a delay to honour, the SDK retries a
// ThrottlingException after a random share of 1 s (doubling), so whether
// a retry comes back before the server's delay is chance; a 429 that
// states no delay asks for none, so the server counts none early there
// (they are only logged). With Retry-After, the SDK waits at least
// that long: no early retry. It marks its attempts in amz-sdk-request, so
// the server tells its retries from first attempts exactly.
func TestLongNodeSDKBedrock(t *testing.T) {
	ra := sdkService("ra", spec.APIBedrock, 1)
	ra.Headers = spec.HeadersStandard
	s, _ := startServer(t, ServerConfig{Services: []ServiceConfig{sdkService("br", spec.APIBedrock, 1), ra}})
	var got struct {
		Pair, RetryAfterPair []string
		Answer, Stop         string
		Usage, StreamUsage   map[string]int64
		Streamed, StreamStop string
		Tool, ToolStop       string
		ToolArgs             map[string]any
		Thrown               struct {
			Name   string
			Status int
		}
	}
	runNodeSDK(t, "sdk-bedrock.mjs", "@aws-sdk/client-bedrock-runtime", &got, s.URL("br"), s.URL("ra"))
	want := strings.Join(wire.Answer(5), "")
	if len(got.Pair) != 2 || got.Pair[0] != want || got.Pair[1] != want || got.Answer != want || got.Stop != "end_turn" ||
		len(got.RetryAfterPair) != 2 || got.RetryAfterPair[0] != want || got.RetryAfterPair[1] != want {
		t.Errorf("answers %+v, want %q each", got, want)
	}
	if got.Streamed != strings.Join(wire.Answer(3), "") || got.StreamStop != "max_tokens" || got.StreamUsage["outputTokens"] != 3 {
		t.Errorf("stream %q %s %v, want 3 tokens cut at max_tokens", got.Streamed, got.StreamStop, got.StreamUsage)
	}
	if got.Usage["outputTokens"] != 5 || got.Usage["totalTokens"] != got.Usage["inputTokens"]+5 {
		t.Errorf("usage %v", got.Usage)
	}
	if q, ok := got.ToolArgs["q"]; got.Tool != "search" || got.ToolStop != "tool_use" || !ok || q != "" || len(got.ToolArgs) != 1 {
		t.Errorf("tool use %s(%v) %s, want search({q: \"\"}) tool_use", got.Tool, got.ToolArgs, got.ToolStop)
	}
	if got.Thrown.Name != "ThrottlingException" || got.Thrown.Status != 429 {
		t.Errorf("thrown %+v, want a ThrottlingException of status 429", got.Thrown)
	}
	st := s.Stats().Services["br"]
	// The pair came at once to one request a second: one of them, at
	// least, was told to wait.
	if st.Completed != 5 || st.RateLimited < 1 {
		t.Errorf("br stats %+v: want 5 completed, a 429 or more", st)
	}
	rs := s.Stats().Services["ra"]
	// The pair, then at most one of the two single attempts (a 429 of
	// theirs is thrown; both are refused when they come within a second
	// of the pair's retry).
	if rs.Completed < 2 || rs.Completed > 3 || rs.RateLimited < 2 || rs.EarlyRetries != 0 {
		t.Errorf("ra stats %+v: want 2 or 3 completed, two 429s or more, no early retry", rs)
	}
	t.Logf("Bedrock, no headers: %d requests, %d 429s, %d early retries; with Retry-After: %d requests, %d 429s, %d early retries",
		st.Arrived, st.RateLimited, st.EarlyRetries, rs.Arrived, rs.RateLimited, rs.EarlyRetries)
}
