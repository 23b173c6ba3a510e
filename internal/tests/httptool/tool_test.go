package httptool_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	. "github.com/simbench/simbench/sched/httptool"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"

	"github.com/simbench/simbench/sched"
)

const testURL = "http://api.test/v1/tool"

// newTool returns a Tool whose client talks to a fresh MockTransport
// answering every POST to testURL with r.
func newTool(r httpmock.Responder) (*Tool, *httpmock.MockTransport) {
	mt := httpmock.NewMockTransport()
	mt.RegisterResponder(http.MethodPost, testURL, r)
	return &Tool{
		Client: &http.Client{Transport: mt},
		Build:  PostJSON(testURL, nil),
		Now:    func() time.Time { return testNow },
	}, mt
}

// respond returns a Responder answering status, body and header kv pairs.
func respond(status int, body string, kv ...string) httpmock.Responder {
	return func(*http.Request) (*http.Response, error) {
		resp := httpmock.NewStringResponse(status, body)
		resp.Header = headers(kv...)
		return resp, nil
	}
}

var testCall = &sched.Call{ID: "c1", Tool: "search", Payload: map[string]string{"q": "go"}}

func TestExecuteClass(t *testing.T) {
	tests := []struct {
		name       string
		giveStatus int
		giveBody   string
		want       sched.Class
		wantCode   string
	}{
		{name: "200", giveStatus: 200, giveBody: `{"ok":true}`, want: sched.ClassSuccess},
		{name: "204 empty", giveStatus: 204, want: sched.ClassSuccess},
		{name: "429 rate limit", giveStatus: 429,
			giveBody: `{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`,
			want:     sched.ClassRateLimited, wantCode: "rate_limit_exceeded"},
		{name: "429 anthropic rate limit", giveStatus: 429,
			giveBody: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			want:     sched.ClassRateLimited, wantCode: "rate_limit_error"},
		{name: "429 quota by code", giveStatus: 429,
			giveBody: `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			want:     sched.ClassQuotaExhausted, wantCode: "insufficient_quota"},
		{name: "429 quota by type only", giveStatus: 429,
			giveBody: `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":null}}`,
			want:     sched.ClassQuotaExhausted, wantCode: "insufficient_quota"},
		{name: "429 plain text", giveStatus: 429, giveBody: "slow down", want: sched.ClassRateLimited},
		{name: "503", giveStatus: 503, giveBody: "upstream busy", want: sched.ClassOverloaded},
		{name: "529 anthropic", giveStatus: 529,
			giveBody: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			want:     sched.ClassOverloaded, wantCode: "overloaded_error"},
		{name: "413", giveStatus: 413,
			giveBody: `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`,
			want:     sched.ClassTooLarge, wantCode: "request_too_large"},
		{name: "400 context length", giveStatus: 400,
			giveBody: `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`,
			want:     sched.ClassTooLarge, wantCode: "context_length_exceeded"},
		{name: "400 anthropic prompt too long", giveStatus: 400,
			giveBody: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215000 tokens > 200000 maximum"}}`,
			want:     sched.ClassTooLarge, wantCode: "invalid_request_error"},
		{name: "400 other", giveStatus: 400,
			giveBody: `{"error":{"message":"Invalid value for 'temperature'","type":"invalid_request_error","code":"invalid_value"}}`,
			want:     sched.ClassPermanent, wantCode: "invalid_value"},
		{name: "401", giveStatus: 401, giveBody: `{"error":"bad key"}`, want: sched.ClassPermanent},
		{name: "404", giveStatus: 404, want: sched.ClassPermanent},
		{name: "408", giveStatus: 408, want: sched.ClassTransient},
		{name: "409", giveStatus: 409, want: sched.ClassConflict},
		{name: "409 openai style", giveStatus: 409,
			giveBody: `{"error":{"message":"Conflict on service tool","type":"invalid_request_error","param":null,"code":"conflict"}}`,
			want:     sched.ClassConflict, wantCode: "conflict"},
		{name: "304", giveStatus: 304, want: sched.ClassPermanent},
		{name: "500", giveStatus: 500, giveBody: `{"error":{"message":"internal","code":500}}`, want: sched.ClassTransient, wantCode: "500"},
		{name: "502 html", giveStatus: 502, giveBody: "<html><body>Bad Gateway</body></html>", want: sched.ClassTransient},
		{name: "504", giveStatus: 504, want: sched.ClassTransient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, _ := newTool(respond(tt.giveStatus, tt.giveBody))
			got := tool.Execute(context.Background(), testCall, 1)
			if got.Class != tt.want || got.Status != tt.giveStatus {
				t.Fatalf("Execute = class %v status %d (err %v); want %v %d", got.Class, got.Status, got.Err, tt.want, tt.giveStatus)
			}
			var se *StatusError
			if tt.want == sched.ClassSuccess {
				if got.Err != nil {
					t.Fatalf("Err = %v, want nil", got.Err)
				}
				return
			}
			if !errors.As(got.Err, &se) || se.Status != tt.giveStatus || se.Code != tt.wantCode {
				t.Fatalf("Err = %#v, want *StatusError{Status: %d, Code: %q}", got.Err, tt.giveStatus, tt.wantCode)
			}
		})
	}
}

func TestStatusErrorMessage(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes
	tests := []struct {
		name       string
		giveStatus int
		giveBody   string
		want       string
	}{
		{name: "openai", giveStatus: 429,
			giveBody: `{"error":{"message":"Rate limit reached.\n  Please retry.","type":"requests","code":"rate_limit_exceeded"}}`,
			want:     "httptool: HTTP 429 Too Many Requests: Rate limit reached. Please retry. (rate_limit_exceeded)"},
		{name: "string error", giveStatus: 401, giveBody: `{"error":"invalid api key"}`,
			want: "httptool: HTTP 401 Unauthorized: invalid api key"},
		{name: "top-level message", giveStatus: 404, giveBody: `{"message":"no such tool"}`,
			want: "httptool: HTTP 404 Not Found: no such tool"},
		{name: "detail", giveStatus: 422, giveBody: `{"detail":"field q required"}`,
			want: "httptool: HTTP 422 Unprocessable Entity: field q required"},
		{name: "json without message", giveStatus: 500, giveBody: ` {"status": "down"} `,
			want: `httptool: HTTP 500 Internal Server Error: {"status": "down"}`},
		{name: "text", giveStatus: 502, giveBody: "  <h1>Bad\n\tGateway</h1>\n",
			want: "httptool: HTTP 502 Bad Gateway: <h1>Bad Gateway</h1>"},
		{name: "unnamed status", giveStatus: 529, giveBody: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			want: "httptool: HTTP 529: Overloaded (overloaded_error)"},
		{name: "empty body", giveStatus: 503, want: "httptool: HTTP 503 Service Unavailable"},
		{name: "long body cut on a rune", giveStatus: 500, giveBody: long,
			want: "httptool: HTTP 500 Internal Server Error: " + long[:200] + "…"},
		{name: "invalid utf-8 replaced", giveStatus: 500, giveBody: "bad \xff byte",
			want: "httptool: HTTP 500 Internal Server Error: bad \uFFFD byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, _ := newTool(respond(tt.giveStatus, tt.giveBody))
			got := tool.Execute(context.Background(), testCall, 1)
			if got.Err == nil || got.Err.Error() != tt.want {
				t.Errorf("Err = %v\nwant  %s", got.Err, tt.want)
			}
		})
	}
}

func TestExecuteRetryAfter(t *testing.T) {
	tests := []struct {
		name           string
		giveTool       Tool // MaxRetryAfter and OverMax only
		giveStatus     int
		giveBody       string
		giveHeaders    []string
		want           sched.Class
		wantDelay      time.Duration
		wantHas        bool
		wantErrTooLong bool
	}{
		{name: "retry-after-ms", giveStatus: 429, giveHeaders: []string{"retry-after-ms", "1500"},
			want: sched.ClassRateLimited, wantDelay: 1500 * time.Millisecond, wantHas: true},
		{name: "Retry-After seconds", giveStatus: 429, giveHeaders: []string{"Retry-After", "20"},
			want: sched.ClassRateLimited, wantDelay: 20 * time.Second, wantHas: true},
		{name: "Retry-After decimal", giveStatus: 503, giveHeaders: []string{"Retry-After", "0.75"},
			want: sched.ClassOverloaded, wantDelay: 750 * time.Millisecond, wantHas: true},
		{name: "Retry-After HTTP-date", giveStatus: 503, giveHeaders: []string{"Retry-After", testNow.Add(45 * time.Second).Format(http.TimeFormat)},
			want: sched.ClassOverloaded, wantDelay: 45 * time.Second, wantHas: true},
		{name: "Retry-After past date", giveStatus: 503, giveHeaders: []string{"Retry-After", testNow.Add(-45 * time.Second).Format(http.TimeFormat)},
			want: sched.ClassOverloaded, wantDelay: 0, wantHas: true},
		{name: "openai reset", giveStatus: 429, giveHeaders: []string{
			"x-ratelimit-reset-requests", "120ms", "x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-tokens", "8s", "x-ratelimit-remaining-tokens", "4000"},
			want: sched.ClassRateLimited, wantDelay: 120 * time.Millisecond, wantHas: true},
		{name: "anthropic reset", giveStatus: 529, giveHeaders: []string{
			"anthropic-ratelimit-tokens-reset", testNow.Add(2 * time.Second).Format(time.RFC3339)},
			want: sched.ClassOverloaded, wantDelay: 2 * time.Second, wantHas: true},
		{name: "garbage ignored", giveStatus: 429, giveHeaders: []string{"Retry-After", "whenever", "retry-after-ms", "soon"},
			want: sched.ClassRateLimited},
		{name: "negative is zero", giveStatus: 429, giveHeaders: []string{"Retry-After", "-30"},
			want: sched.ClassRateLimited, wantDelay: 0, wantHas: true},
		{name: "no delay on success", giveStatus: 200, giveHeaders: []string{"Retry-After", "5", "x-ratelimit-reset-tokens", "1s"},
			want: sched.ClassSuccess},
		{name: "huge unlimited by default", giveStatus: 429, giveHeaders: []string{"Retry-After", "86400"},
			want: sched.ClassRateLimited, wantDelay: 24 * time.Hour, wantHas: true},
		{name: "overflow saturates", giveStatus: 429, giveHeaders: []string{"Retry-After", "1" + strings.Repeat("0", 30)},
			want: sched.ClassRateLimited, wantDelay: math.MaxInt64, wantHas: true},
		{name: "huge clamped", giveTool: Tool{MaxRetryAfter: 2 * time.Minute}, giveStatus: 429, giveHeaders: []string{"Retry-After", "3600"},
			want: sched.ClassRateLimited, wantDelay: 2 * time.Minute, wantHas: true},
		{name: "at the maximum kept", giveTool: Tool{MaxRetryAfter: 2 * time.Minute, OverMax: sched.RetryAfterFail}, giveStatus: 429, giveHeaders: []string{"Retry-After", "120"},
			want: sched.ClassRateLimited, wantDelay: 2 * time.Minute, wantHas: true},
		{name: "huge fails", giveTool: Tool{MaxRetryAfter: 2 * time.Minute, OverMax: sched.RetryAfterFail}, giveStatus: 429, giveHeaders: []string{"Retry-After", "3600"},
			want: sched.ClassPermanent, wantDelay: time.Hour, wantHas: true, wantErrTooLong: true},
		{name: "huge date fails", giveTool: Tool{MaxRetryAfter: time.Minute, OverMax: sched.RetryAfterFail}, giveStatus: 503,
			giveHeaders: []string{"Retry-After", testNow.Add(48 * time.Hour).Format(http.TimeFormat)},
			want:        sched.ClassPermanent, wantDelay: 48 * time.Hour, wantHas: true, wantErrTooLong: true},
		{name: "limit ignores non-retryable classes", giveTool: Tool{MaxRetryAfter: time.Minute, OverMax: sched.RetryAfterFail}, giveStatus: 429,
			giveBody: `{"error":{"code":"insufficient_quota","message":"quota"}}`, giveHeaders: []string{"Retry-After", "86400"},
			want: sched.ClassQuotaExhausted, wantDelay: 24 * time.Hour, wantHas: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, _ := newTool(respond(tt.giveStatus, tt.giveBody, tt.giveHeaders...))
			tool.MaxRetryAfter, tool.OverMax = tt.giveTool.MaxRetryAfter, tt.giveTool.OverMax
			got := tool.Execute(context.Background(), testCall, 1)
			if got.Class != tt.want || got.RetryAfter != tt.wantDelay || got.HasRetryAfter != tt.wantHas {
				t.Fatalf("Execute = class %v, RetryAfter %v, %v (err %v); want %v, %v, %v",
					got.Class, got.RetryAfter, got.HasRetryAfter, got.Err, tt.want, tt.wantDelay, tt.wantHas)
			}
			if errors.Is(got.Err, sched.ErrRetryAfterTooLong) != tt.wantErrTooLong {
				t.Fatalf("Err = %v; want errors.Is(ErrRetryAfterTooLong) = %v", got.Err, tt.wantErrTooLong)
			}
			if tt.wantErrTooLong && !strings.Contains(got.Err.Error(), tt.wantDelay.String()) {
				t.Errorf("Err = %v, does not state the delay %v", got.Err, tt.wantDelay)
			}
		})
	}
}

func TestExecuteRetryAfterFailStatesValueAndStatus(t *testing.T) {
	tool, _ := newTool(respond(429, `{"error":{"message":"slow down","code":"rate_limit_exceeded"}}`, "Retry-After", "3600"))
	tool.MaxRetryAfter, tool.OverMax = 2*time.Minute, sched.RetryAfterFail
	got := tool.Execute(context.Background(), testCall, 1)
	want := "sched: retry delay exceeds the maximum: server asked for 1h0m0s, maximum 2m0s: " +
		"httptool: HTTP 429 Too Many Requests: slow down (rate_limit_exceeded)"
	var se *StatusError
	if got.Err == nil || got.Err.Error() != want || !errors.As(got.Err, &se) || got.Status != 429 {
		t.Errorf("Execute = status %d, Err %v\nwant status 429, Err %s", got.Status, got.Err, want)
	}
}

func TestExecuteUsage(t *testing.T) {
	tests := []struct {
		name       string
		giveStatus int
		giveBody   string
		want       int64
		wantHas    bool
	}{
		{name: "openai total", giveStatus: 200,
			giveBody: `{"id":"x","usage":{"prompt_tokens":900,"completion_tokens":120,"total_tokens":1020}}`, want: 1020, wantHas: true},
		{name: "openai responses api", giveStatus: 200,
			giveBody: `{"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}`, want: 15, wantHas: true},
		{name: "anthropic input plus output", giveStatus: 200,
			giveBody: `{"type":"message","usage":{"input_tokens":2095,"output_tokens":503}}`, want: 2598, wantHas: true},
		{name: "anthropic input only", giveStatus: 200, giveBody: `{"usage":{"input_tokens":40}}`, want: 40, wantHas: true},
		{name: "zero usage", giveStatus: 200, giveBody: `{"usage":{"total_tokens":0}}`, want: 0, wantHas: true},
		{name: "usage on an error body", giveStatus: 500, giveBody: `{"error":"boom","usage":{"total_tokens":7}}`, want: 7, wantHas: true},
		{name: "whole float accepted", giveStatus: 200, giveBody: `{"usage":{"total_tokens":12.0}}`, want: 12, wantHas: true},
		{name: "fraction rejected", giveStatus: 200, giveBody: `{"usage":{"total_tokens":12.5}}`},
		{name: "negative rejected", giveStatus: 200, giveBody: `{"usage":{"total_tokens":-3}}`},
		{name: "bad output rejects the sum", giveStatus: 200, giveBody: `{"usage":{"input_tokens":3,"output_tokens":"many"}}`},
		{name: "string usage", giveStatus: 200, giveBody: `{"usage":"lots"}`},
		{name: "null usage", giveStatus: 200, giveBody: `{"usage":null}`},
		{name: "empty usage", giveStatus: 200, giveBody: `{"usage":{}}`},
		{name: "no usage", giveStatus: 200, giveBody: `{"result":"ok"}`},
		{name: "not json", giveStatus: 200, giveBody: `usage: 12`},
		{name: "array", giveStatus: 200, giveBody: `[{"usage":{"total_tokens":3}}]`},
		{name: "truncated json", giveStatus: 200, giveBody: `{"usage":{"total_tokens":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, _ := newTool(respond(tt.giveStatus, tt.giveBody))
			got := tool.Execute(context.Background(), testCall, 1)
			if got.Tokens != tt.want || got.HasUsage != tt.wantHas {
				t.Errorf("Execute = Tokens %d, HasUsage %v; want %d, %v", got.Tokens, got.HasUsage, tt.want, tt.wantHas)
			}
		})
	}
}

func TestExecuteDecode(t *testing.T) {
	t.Run("default value is the body", func(t *testing.T) {
		tool, _ := newTool(respond(200, `{"answer":42}`))
		got := tool.Execute(context.Background(), testCall, 1)
		if b, ok := got.Value.([]byte); !ok || string(b) != `{"answer":42}` || got.Err != nil {
			t.Errorf("Execute = Value %#v, Err %v; want the body bytes", got.Value, got.Err)
		}
	})
	t.Run("decode sees status and body", func(t *testing.T) {
		tool, _ := newTool(respond(201, `{"answer":42}`))
		tool.Decode = func(status int, body []byte) (any, error) {
			var v struct{ Answer int }
			err := json.Unmarshal(body, &v)
			return [2]int{status, v.Answer}, err
		}
		got := tool.Execute(context.Background(), testCall, 1)
		if got.Value != [2]int{201, 42} || got.Class != sched.ClassSuccess {
			t.Errorf("Execute = Value %v, class %v; want [201 42], success", got.Value, got.Class)
		}
	})
	t.Run("decode error is permanent", func(t *testing.T) {
		tool, _ := newTool(respond(200, `not json`))
		tool.Decode = func(_ int, body []byte) (any, error) {
			var v any
			return "partial", json.Unmarshal(body, &v)
		}
		got := tool.Execute(context.Background(), testCall, 1)
		var se *json.SyntaxError
		if got.Class != sched.ClassPermanent || !errors.As(got.Err, &se) || got.Value != nil || got.Status != 200 {
			t.Errorf("Execute = class %v, Value %v, Err %v; want permanent, nil, a wrapped *json.SyntaxError", got.Class, got.Value, got.Err)
		}
	})
}

// countingBody is an endless (or bounded) body that counts the bytes read
// from it and records whether it was closed.
type countingBody struct {
	left   int64 // bytes left; negative is endless
	read   int64
	closed bool
}

func (b *countingBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	n := len(p)
	if b.left > 0 && int64(n) > b.left {
		n = int(b.left)
	}
	for i := range p[:n] {
		p[i] = 'x'
	}
	b.read += int64(n)
	if b.left > 0 {
		b.left -= int64(n)
	}
	return n, nil
}

func (b *countingBody) Close() error { b.closed = true; return nil }

func TestExecuteBodyBound(t *testing.T) {
	const maxBody = 4096
	tests := []struct {
		name       string
		giveStatus int
		giveSize   int64 // -1: endless
		want       sched.Class
		wantRead   int64
	}{
		{name: "endless 200", giveStatus: 200, giveSize: -1, want: sched.ClassPermanent, wantRead: maxBody + 1},
		{name: "endless 500", giveStatus: 500, giveSize: -1, want: sched.ClassTransient, wantRead: maxBody + 1},
		{name: "one byte over", giveStatus: 200, giveSize: maxBody + 1, want: sched.ClassPermanent, wantRead: maxBody + 1},
		{name: "exactly the bound", giveStatus: 200, giveSize: maxBody, want: sched.ClassSuccess, wantRead: maxBody},
		{name: "small", giveStatus: 200, giveSize: 10, want: sched.ClassSuccess, wantRead: 10},
		{name: "small error", giveStatus: 429, giveSize: 10, want: sched.ClassRateLimited, wantRead: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := &countingBody{left: tt.giveSize}
			tool, _ := newTool(func(*http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: tt.giveStatus, Header: http.Header{}, Body: body, ContentLength: -1}, nil
			})
			tool.MaxBody = maxBody
			got := tool.Execute(context.Background(), testCall, 1)
			if got.Class != tt.want || body.read != tt.wantRead || !body.closed {
				t.Fatalf("Execute = class %v (err %v), read %d, closed %v; want %v, read %d, closed",
					got.Class, got.Err, body.read, body.closed, tt.want, tt.wantRead)
			}
			if b, ok := got.Value.([]byte); tt.want == sched.ClassSuccess && (!ok || int64(len(b)) != tt.wantRead) {
				t.Errorf("Value has %d bytes, want %d", len(b), tt.wantRead)
			}
		})
	}
}

func TestExecuteDefaultMaxBody(t *testing.T) {
	body := &countingBody{left: -1}
	tool, _ := newTool(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: body, ContentLength: -1}, nil
	})
	got := tool.Execute(context.Background(), testCall, 1)
	if got.Class != sched.ClassPermanent || body.read != DefaultMaxBody+1 || !body.closed {
		t.Errorf("Execute = class %v, read %d, closed %v; want permanent, %d, closed", got.Class, body.read, body.closed, DefaultMaxBody+1)
	}
}

// failingBody returns some bytes, then err.
type failingBody struct {
	err    error
	before func()
	sent   bool
	closed bool
}

func (b *failingBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, `{"partial":`), nil
	}
	if b.before != nil {
		b.before()
	}
	return 0, b.err
}

func (b *failingBody) Close() error { b.closed = true; return nil }

func TestExecuteBodyReadError(t *testing.T) {
	body := &failingBody{err: syscall.ECONNRESET}
	tool, _ := newTool(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: body}, nil
	})
	got := tool.Execute(context.Background(), testCall, 1)
	if got.Class != sched.ClassTransient || !errors.Is(got.Err, syscall.ECONNRESET) || got.Status != 200 || got.Value != nil || !body.closed {
		t.Errorf("Execute = class %v, status %d, Err %v, Value %v, closed %v; want transient 200 wrapping ECONNRESET, closed",
			got.Class, got.Status, got.Err, got.Value, body.closed)
	}
}

func TestExecuteTransportError(t *testing.T) {
	tests := []struct {
		name string
		give error
		want sched.Class
	}{
		{name: "connection reset", give: syscall.ECONNRESET, want: sched.ClassTransient},
		{name: "connection refused", give: syscall.ECONNREFUSED, want: sched.ClassTransient},
		{name: "EOF", give: io.EOF, want: sched.ClassTransient},
		{name: "unexpected EOF", give: io.ErrUnexpectedEOF, want: sched.ClassTransient},
		{name: "client timeout", give: context.DeadlineExceeded, want: sched.ClassTransient},
		{name: "unknown authority", give: x509.UnknownAuthorityError{}, want: sched.ClassPermanent},
		{name: "hostname mismatch", give: x509.HostnameError{Host: "api.test", Certificate: &x509.Certificate{}}, want: sched.ClassPermanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, _ := newTool(httpmock.NewErrorResponder(tt.give))
			got := tool.Execute(context.Background(), testCall, 1)
			if got.Class != tt.want || !errors.Is(got.Err, tt.give) || got.Status != 0 {
				t.Errorf("Execute = class %v, status %d, Err %v; want %v wrapping %v", got.Class, got.Status, got.Err, tt.want, tt.give)
			}
		})
	}
}

func TestExecuteCancelledBeforeStart(t *testing.T) {
	tests := []struct {
		name    string
		give    func() (context.Context, context.CancelFunc)
		want    sched.Class
		wantErr error
	}{
		{name: "cancelled", want: sched.ClassCancelled, wantErr: context.Canceled, give: func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}},
		{name: "deadline passed", want: sched.ClassTransient, wantErr: context.DeadlineExceeded, give: func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Unix(0, 0))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.give()
			defer cancel()
			tool, mt := newTool(respond(200, "{}"))
			got := tool.Execute(ctx, testCall, 1)
			if got.Class != tt.want || !errors.Is(got.Err, tt.wantErr) || mt.GetTotalCallCount() != 0 {
				t.Errorf("Execute = class %v, Err %v, %d requests; want %v, %v, no request",
					got.Class, got.Err, mt.GetTotalCallCount(), tt.want, tt.wantErr)
			}
		})
	}
}

func TestExecuteCancelledWhileRunning(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tool, _ := newTool(func(req *http.Request) (*http.Response, error) {
		cancel() // the caller gives up while the request is in flight
		<-req.Context().Done()
		return nil, req.Context().Err()
	})
	got := tool.Execute(ctx, testCall, 1)
	if got.Class != sched.ClassCancelled || got.Err != context.Canceled {
		t.Errorf("Execute = class %v, Err %v; want cancelled, context.Canceled", got.Class, got.Err)
	}
}

func TestExecuteCancelledWhileReadingBody(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := &failingBody{err: context.Canceled, before: cancel}
	tool, _ := newTool(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: body}, nil
	})
	got := tool.Execute(ctx, testCall, 1)
	if got.Class != sched.ClassCancelled || got.Err != context.Canceled || got.Status != 200 || !body.closed {
		t.Errorf("Execute = class %v, status %d, Err %v, closed %v; want cancelled, 200, context.Canceled, closed",
			got.Class, got.Status, got.Err, body.closed)
	}
}

func TestExecuteBuild(t *testing.T) {
	t.Run("request carries payload, headers and the attempt's context", func(t *testing.T) {
		type ctxKey struct{}
		ctx := context.WithValue(context.Background(), ctxKey{}, "attempt-ctx")
		var (
			gotBody  string
			gotCtx   any
			gotAuth  string
			gotCType string
		)
		tool, _ := newTool(func(req *http.Request) (*http.Response, error) {
			b, err := io.ReadAll(req.Body)
			gotBody, gotCtx = string(b), req.Context().Value(ctxKey{})
			gotAuth, gotCType = req.Header.Get("Authorization"), req.Header.Get("Content-Type")
			return httpmock.NewStringResponse(200, "{}"), err
		})
		tool.Build = PostJSON(testURL, http.Header{"Authorization": {"Bearer k"}})
		got := tool.Execute(ctx, testCall, 1)
		if got.Class != sched.ClassSuccess || gotBody != `{"q":"go"}` || gotCtx != "attempt-ctx" ||
			gotAuth != "Bearer k" || gotCType != "application/json" {
			t.Errorf("request body %q ctx %v auth %q type %q (outcome %v %v)", gotBody, gotCtx, gotAuth, gotCType, got.Class, got.Err)
		}
	})
	t.Run("raw payload sent as is", func(t *testing.T) {
		var gotBody string
		tool, _ := newTool(func(req *http.Request) (*http.Response, error) {
			b, err := io.ReadAll(req.Body)
			gotBody = string(b)
			return httpmock.NewStringResponse(200, "{}"), err
		})
		tool.Execute(context.Background(), &sched.Call{ID: "raw", Payload: json.RawMessage(`{"raw":1}`)}, 1)
		if gotBody != `{"raw":1}` {
			t.Errorf("request body %q, want the raw payload", gotBody)
		}
	})
	t.Run("background request gets the attempt's context", func(t *testing.T) {
		type ctxKey struct{}
		ctx := context.WithValue(context.Background(), ctxKey{}, "attempt-ctx")
		var gotCtx any
		tool, _ := newTool(func(req *http.Request) (*http.Response, error) {
			gotCtx = req.Context().Value(ctxKey{})
			return httpmock.NewStringResponse(200, "{}"), nil
		})
		tool.Build = func(context.Context, *sched.Call, int) (*http.Request, error) {
			return http.NewRequest(http.MethodPost, testURL, nil)
		}
		tool.Execute(ctx, testCall, 1)
		if gotCtx != "attempt-ctx" {
			t.Errorf("request context value %v, want the attempt's context", gotCtx)
		}
	})
	t.Run("attempt number reaches Build", func(t *testing.T) {
		var gotAttempts []int
		tool, _ := newTool(respond(200, "{}"))
		build := tool.Build
		tool.Build = func(ctx context.Context, call *sched.Call, attempt int) (*http.Request, error) {
			gotAttempts = append(gotAttempts, attempt)
			return build(ctx, call, attempt)
		}
		tool.Execute(context.Background(), testCall, 1)
		tool.Execute(context.Background(), testCall, 2)
		if len(gotAttempts) != 2 || gotAttempts[0] != 1 || gotAttempts[1] != 2 {
			t.Errorf("Build saw attempts %v, want [1 2]", gotAttempts)
		}
	})
	t.Run("build error is permanent", func(t *testing.T) {
		tool, mt := newTool(respond(200, "{}"))
		got := tool.Execute(context.Background(), &sched.Call{ID: "bad", Payload: func() {}}, 1)
		var ute *json.UnsupportedTypeError
		if got.Class != sched.ClassPermanent || !errors.As(got.Err, &ute) || !strings.Contains(got.Err.Error(), `"bad"`) || mt.GetTotalCallCount() != 0 {
			t.Errorf("Execute = class %v, Err %v; want permanent naming the call, no request", got.Class, got.Err)
		}
	})
	t.Run("nil Build panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("Execute with nil Build did not panic")
			}
		}()
		(&Tool{}).Execute(context.Background(), testCall, 1)
	})
}

func TestExecuteConcurrent(t *testing.T) {
	tool, mt := newTool(respond(429, `{"error":{"code":"rate_limit_exceeded"}}`, "retry-after-ms", "10"))
	var wg sync.WaitGroup
	outcomes := make([]sched.Outcome, 16)
	for i := range outcomes {
		wg.Go(func() { outcomes[i] = tool.Execute(context.Background(), testCall, 1) })
	}
	wg.Wait()
	for i, got := range outcomes {
		if got.Class != sched.ClassRateLimited || got.RetryAfter != 10*time.Millisecond {
			t.Errorf("outcome %d = class %v, RetryAfter %v; want rate limited, 10ms", i, got.Class, got.RetryAfter)
		}
	}
	if n := mt.GetTotalCallCount(); n != len(outcomes) {
		t.Errorf("%d requests, want %d", n, len(outcomes))
	}
}
