package httptool

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/simbench/simbench/sched"
)

func TestStatusClass(t *testing.T) {
	tests := []struct {
		give int
		want sched.Class
	}{
		{200, sched.ClassSuccess},
		{204, sched.ClassSuccess},
		{429, sched.ClassRateLimited},
		{503, sched.ClassOverloaded}, // overloaded, as 529: adaptive limits cut on it
		{529, sched.ClassOverloaded},
		{409, sched.ClassConflict},
		{413, sched.ClassTooLarge},
		{400, sched.ClassPermanent}, // too large only when the body says the context is
		{401, sched.ClassPermanent},
		{408, sched.ClassTransient},
		{500, sched.ClassTransient},
		{502, sched.ClassTransient},
		{0, sched.ClassTransient}, // no answer: the connection closed first
		{302, sched.ClassPermanent},
	}
	for _, tt := range tests {
		if got := StatusClass(tt.give); got != tt.want {
			t.Errorf("StatusClass(%d) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

// Read takes the retry delay of answers other than 2xx only, the quota of
// every answer, and nothing of a missing one.
func TestRead(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := http.Header{}
	h.Set("Retry-After", "7")
	h.Set("X-Ratelimit-Remaining-Requests", "3")
	h.Set("X-Ratelimit-Limit-Requests", "60")
	h.Set("X-Ratelimit-Reset-Requests", "1.5s")
	quota := sched.ServerQuota{Requests: sched.QuotaLeft{Known: true, Remaining: 3, Limit: 60, Reset: 1500 * time.Millisecond}}
	tests := []struct {
		status int
		want   sched.Outcome
	}{
		{200, sched.Outcome{Class: sched.ClassSuccess, Status: 200, Quota: quota}},
		{429, sched.Outcome{Class: sched.ClassRateLimited, Status: 429, RetryAfter: 7 * time.Second, HasRetryAfter: true, Quota: quota}},
		{0, sched.Outcome{Class: sched.ClassTransient}},
	}
	for _, tt := range tests {
		if got := Read(tt.status, h, now); got != tt.want {
			t.Errorf("Read(%d) = %+v, want %+v", tt.status, got, tt.want)
		}
	}
}

func TestReadBodyRetryInfo(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	google := func(delay string) []byte {
		return []byte(`{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED","details":[` +
			`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},` +
			`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"` + delay + `"}]}}`)
	}
	withHeader := http.Header{}
	withHeader.Set("Retry-After", "7")
	tests := []struct {
		name  string
		h     http.Header
		body  []byte
		delay time.Duration
		has   bool
	}{
		{"whole seconds", http.Header{}, google("13s"), 13 * time.Second, true},
		{"decimal seconds", http.Header{}, google("1.5s"), 1500 * time.Millisecond, true},
		{"the header wins", withHeader, google("13s"), 7 * time.Second, true},
		{"no unit", http.Header{}, google("13"), 0, false},
		{"not a number", http.Header{}, google("soon s"), 0, false},
		{"details not a list", http.Header{}, []byte(`{"error":{"message":"x","details":{"retryDelay":"3s"}}}`), 0, false},
		{"no details", http.Header{}, []byte(`{"error":{"message":"x"}}`), 0, false},
	}
	for _, tt := range tests {
		o := ReadBody(429, tt.h, tt.body, now)
		if o.RetryAfter != tt.delay || o.HasRetryAfter != tt.has || o.Class != sched.ClassRateLimited {
			t.Errorf("%s: ReadBody = class %v, delay %v (%v), want rate limited, %v (%v)", tt.name, o.Class, o.RetryAfter, o.HasRetryAfter, tt.delay, tt.has)
		}
	}
}

func TestReadBodyClass(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		status int
		body   string
		want   sched.Class
		code   string
	}{
		{429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, sched.ClassQuotaExhausted, "insufficient_quota"},
		{400, `{"error":{"message":"too long","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, sched.ClassTooLarge, "context_length_exceeded"},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`, sched.ClassTooLarge, "invalid_request_error"},
		{429, `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`, sched.ClassRateLimited, "rate_limit_exceeded"},
		{200, `{"usage":{"total_tokens":5}}`, sched.ClassSuccess, ""},
	}
	for _, tt := range tests {
		o := ReadBody(tt.status, http.Header{}, []byte(tt.body), now)
		if o.Class != tt.want {
			t.Errorf("ReadBody(%d, %s) class = %v, want %v", tt.status, tt.body, o.Class, tt.want)
		}
		var se *StatusError
		if tt.code != "" && (!errors.As(o.Err, &se) || se.Code != tt.code) {
			t.Errorf("ReadBody(%d, %s) err = %v, want a StatusError with code %q", tt.status, tt.body, o.Err, tt.code)
		}
	}
}
