package fakeapi

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// A Bedrock Converse answer with its usage and stopReason, one cut at
// maxTokens, a toolUse named by toolChoice, a rate limit's 429 as a
// ThrottlingException named in x-amzn-ErrorType (no Retry-After: Bedrock
// sends none), an empty request's ValidationException and an unknown
// operation's 404, each {"message"} alone.
func TestBedrockShape(t *testing.T) {
	var clk manualClock
	plain := limitedService("br", spec.APIBedrock)
	plain.RPM, plain.Burst = 600, 0
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{plain, limitedService("br429", spec.APIBedrock)}})
	converse := s.URL("br") + "/model/anthropic.claude-3-haiku/converse"
	const messages = `"messages":[{"role":"user","content":[{"text":"hello"}]}]`
	const sigv4 = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261208/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=0"

	status, h, b := postRead(t, c, converse, `{`+messages+`}`, "Authorization", sigv4)
	m := decodeJSON(t, b)
	msg := m["output"].(map[string]any)["message"].(map[string]any)
	content := msg["content"].([]any)
	usage := m["usage"].(map[string]any)
	if status != 200 || msg["role"] != "assistant" || len(content) != 1 || m["stopReason"] != "end_turn" ||
		content[0].(map[string]any)["text"] != strings.Join(wire.Answer(5), "") || h.Get(wire.ErrorTypeHeader) != "" {
		t.Fatalf("answer: %d %v %s", status, h, b)
	}
	// The prompt is a quarter of its fields' bytes, rounded up.
	if in := int64(len(`[{"role":"user","content":[{"text":"hello"}]}]`)+3) / 4; usage["inputTokens"] != float64(in) ||
		usage["outputTokens"] != 5.0 || usage["totalTokens"] != float64(in+5) {
		t.Fatalf("usage %v, want %d in", usage, int64(len(`[{"role":"user","content":[{"text":"hello"}]}]`)+3)/4)
	}

	status, _, b = postRead(t, c, converse, `{`+messages+`,"inferenceConfig":{"maxTokens":3}}`)
	m = decodeJSON(t, b)
	text := m["output"].(map[string]any)["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	if status != 200 || m["stopReason"] != "max_tokens" || text != strings.Join(wire.Answer(3), "") ||
		m["usage"].(map[string]any)["outputTokens"] != 3.0 {
		t.Fatalf("cut at maxTokens 3: %d %s", status, b)
	}

	status, _, b = postRead(t, c, converse, `{`+messages+`,"toolConfig":{"tools":[{"toolSpec":{"name":"search",`+
		`"inputSchema":{"json":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}}],"toolChoice":{"tool":{"name":"search"}}}}`)
	m = decodeJSON(t, b)
	content = m["output"].(map[string]any)["message"].(map[string]any)["content"].([]any)
	tu, _ := content[0].(map[string]any)["toolUse"].(map[string]any)
	if status != 200 || m["stopReason"] != "tool_use" || tu["name"] != "search" || !strings.HasPrefix(tu["toolUseId"].(string), "call_sb") {
		t.Fatalf("tool use: %d %s", status, b)
	}
	if in, _ := json.Marshal(tu["input"]); string(in) != `{"q":""}` {
		t.Fatalf("input %s, want the schema's required string", in)
	}

	postRead(t, c, s.URL("br429")+"/model/m/converse", `{`+messages+`}`)
	clk.advance(20500 * time.Millisecond)
	status, h, b = postRead(t, c, s.URL("br429")+"/model/m/converse", `{`+messages+`}`)
	if m := decodeJSON(t, b); status != 429 || h.Get(wire.ErrorTypeHeader) != "ThrottlingException" || len(m) != 1 ||
		!strings.Contains(m["message"].(string), "requests per min (RPM)") || h.Get("Retry-After") != "" {
		t.Fatalf("429: %d %v %s", status, h, b)
	}

	status, h, b = postRead(t, c, converse, `{}`)
	if m := decodeJSON(t, b); status != 400 || h.Get(wire.ErrorTypeHeader) != "ValidationException" || len(m) != 1 {
		t.Fatalf("no messages: %d %v %s", status, h, b)
	}
	status, h, b = postRead(t, c, s.URL("br")+"/model/m/invoke", `{}`)
	if m := decodeJSON(t, b); status != 404 || h.Get(wire.ErrorTypeHeader) != "ResourceNotFoundException" ||
		!strings.Contains(m["message"].(string), "/model/{modelId}/converse") {
		t.Fatalf("unknown operation: %d %v %s", status, h, b)
	}
}

// The AWS SDKs' amz-sdk-request names the attempt: the first is fresh,
// later ones are marked retries; a value without an attempt names none.
func TestAmzAttempt(t *testing.T) {
	for _, tc := range []struct {
		v  string
		n  int
		ok bool
	}{
		{"attempt=1; max=3", 1, true},
		{"attempt=2; max=3", 2, true},
		{"max=3;attempt=3", 3, true},
		{"max=3", 0, false},
		{"attempt=x; max=3", 0, false},
		{"attempt=0", 0, false},
	} {
		if n, ok := amzAttempt(tc.v); n != tc.n || ok != tc.ok {
			t.Errorf("amzAttempt(%q) = %d, %v; want %d, %v", tc.v, n, ok, tc.n, tc.ok)
		}
	}
}

// A retry the AWS SDK marks (amz-sdk-request attempt 2) before the 429's
// delay has passed is early; a first attempt at the same moment is not.
func TestAmzSDKRequestCountsEarlyRetries(t *testing.T) {
	var clk manualClock
	sc := limitedService("br", spec.APIBedrock)
	sc.Headers = spec.HeadersStandard
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{sc}})
	url := s.URL("br") + "/model/m/converse"
	const body = `{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`
	postRead(t, c, url, body, AmzSDKRequestHeader, "attempt=1; max=3")
	status, h, _ := postRead(t, c, url, body, AmzSDKRequestHeader, "attempt=1; max=3")
	if status != 429 || h.Get("Retry-After") != "60" {
		t.Fatalf("second request: %d %v, want a 429 asking for 60 s", status, h)
	}
	clk.advance(time.Second)
	postRead(t, c, url, body, AmzSDKRequestHeader, "attempt=1; max=3")
	if n := s.Stats().Services["br"].EarlyRetries; n != 0 {
		t.Fatalf("a first attempt counted early: %d", n)
	}
	postRead(t, c, url, body, AmzSDKRequestHeader, "attempt=2; max=3")
	if st := s.Stats().Services["br"]; st.EarlyRetries != 1 || st.EarlyRetriesBy["retry_count"] != 1 {
		t.Fatalf("stats %+v: want the marked retry, 59 s early, counted", st)
	}
}

// eventFrame is one decoded message of an AWS event stream.
type eventFrame struct {
	headers map[string]string
	payload map[string]any
}

// readEventStream decodes body as AWS event-stream messages, checking each
// length and both CRC-32s as the format defines them, and every header a
// string (type 7).
func readEventStream(t *testing.T, body []byte) []eventFrame {
	t.Helper()
	var out []eventFrame
	for len(body) > 0 {
		if len(body) < 16 {
			t.Fatalf("%d bytes left, less than a message", len(body))
		}
		total, hlen := binary.BigEndian.Uint32(body), binary.BigEndian.Uint32(body[4:])
		if int(total) > len(body) || binary.BigEndian.Uint32(body[8:]) != crc32.ChecksumIEEE(body[:8]) ||
			binary.BigEndian.Uint32(body[total-4:]) != crc32.ChecksumIEEE(body[:total-4]) {
			t.Fatalf("bad prelude or CRC in % x", body[:min(len(body), 32)])
		}
		f := eventFrame{headers: map[string]string{}}
		for h := body[12 : 12+hlen]; len(h) > 0; {
			name := string(h[1 : 1+h[0]])
			h = h[1+h[0]:]
			if h[0] != 7 {
				t.Fatalf("header %s of type %d", name, h[0])
			}
			n := binary.BigEndian.Uint16(h[1:])
			f.headers[name] = string(h[3 : 3+n])
			h = h[3+n:]
		}
		f.payload = decodeJSON(t, body[12+hlen:total-4])
		out = append(out, f)
		body = body[total:]
	}
	return out
}

// ConverseStream answers an AWS event stream: messageStart, a
// contentBlockDelta a token, contentBlockStop, messageStop with the stop
// reason and metadata with the usage; a tool call is a contentBlockStart,
// a delta of its input as a JSON string, and a contentBlockStop.
func TestBedrockConverseStream(t *testing.T) {
	sc := limitedService("br", spec.APIBedrock)
	sc.RPM, sc.Burst = 600, 0
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{sc}})
	url := s.URL("br") + "/model/m/converse-stream"
	const messages = `"messages":[{"role":"user","content":[{"text":"hello"}]}]`

	status, h, b := postRead(t, c, url, `{`+messages+`,"inferenceConfig":{"maxTokens":3}}`)
	if status != 200 || h.Get("Content-Type") != wire.EventStreamContentType {
		t.Fatalf("stream: %d %v %s", status, h, b)
	}
	frames := readEventStream(t, b)
	var events []string
	var text strings.Builder
	for _, f := range frames {
		if f.headers[":message-type"] != "event" || f.headers[":content-type"] != "application/json" {
			t.Fatalf("headers %v", f.headers)
		}
		events = append(events, f.headers[":event-type"])
		if d, ok := f.payload["delta"].(map[string]any); ok {
			text.WriteString(d["text"].(string))
		}
	}
	if got := strings.Join(events, " "); got != "messageStart contentBlockDelta contentBlockDelta contentBlockDelta contentBlockStop messageStop metadata" {
		t.Fatalf("events %s", got)
	}
	usage := frames[6].payload["usage"].(map[string]any)
	if text.String() != strings.Join(wire.Answer(3), "") || frames[5].payload["stopReason"] != "max_tokens" || usage["outputTokens"] != 3.0 {
		t.Fatalf("streamed %q, stop %v, usage %v", text.String(), frames[5].payload, usage)
	}

	status, _, b = postRead(t, c, url, `{`+messages+`,"toolConfig":{"tools":[{"toolSpec":{"name":"search",`+
		`"inputSchema":{"json":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}}],"toolChoice":{"any":{}}}}`)
	frames = readEventStream(t, b)
	events = events[:0]
	for _, f := range frames {
		events = append(events, f.headers[":event-type"])
	}
	if got := strings.Join(events, " "); status != 200 || got != "messageStart contentBlockStart contentBlockDelta contentBlockStop messageStop metadata" {
		t.Fatalf("tool stream: %d %s", status, got)
	}
	start := frames[1].payload["start"].(map[string]any)["toolUse"].(map[string]any)
	input := frames[2].payload["delta"].(map[string]any)["toolUse"].(map[string]any)["input"]
	if start["name"] != "search" || input != `{"q":""}` || frames[4].payload["stopReason"] != "tool_use" {
		t.Fatalf("tool use %v, input %v, stop %v", start, input, frames[4].payload)
	}
}
