package httptool_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/httptool"
)

// A tool call against an OpenAI-style endpoint: the first attempt is rate
// limited with a retry-after-ms header, the second succeeds and reports its
// token usage. A loopback server stands in for the provider; in production
// the scheduler's Runner calls Execute.
func ExampleTool() {
	attempts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if attempts++; attempts == 1 {
			w.Header().Set("Retry-After-Ms", "1500")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}`)
			return
		}
		fmt.Fprint(w, `{"results":["a","b"],"usage":{"total_tokens":812}}`)
	}))
	defer srv.Close()

	tool := &httptool.Tool{
		Client: srv.Client(),
		Build:  httptool.PostJSON(srv.URL+"/v1/search", http.Header{"Authorization": {"Bearer sk-test"}}),
	}
	call := &sched.Call{ID: "call_1", Tool: "search", Payload: map[string]string{"q": "rate limits"}}
	for attempt := 1; attempt <= 2; attempt++ {
		o := tool.Execute(context.Background(), call, attempt)
		fmt.Printf("attempt %d: %v, status %d, retry after %v, tokens %d, err: %v\n",
			attempt, o.Class, o.Status, o.RetryAfter, o.Tokens, o.Err)
	}
	// Output:
	// attempt 1: rate_limited, status 429, retry after 1.5s, tokens 0, err: httptool: HTTP 429 Too Many Requests: Rate limit reached (rate_limit_exceeded)
	// attempt 2: success, status 200, retry after 0s, tokens 812, err: <nil>
}

// RetryDelay reads whichever delay header the server sent, here OpenAI's
// reset headers: the request limit is the one exhausted.
func ExampleRetryDelay() {
	h := http.Header{}
	h.Set("X-Ratelimit-Remaining-Requests", "0")
	h.Set("X-Ratelimit-Reset-Requests", "1m2s")
	h.Set("X-Ratelimit-Remaining-Tokens", "149000")
	h.Set("X-Ratelimit-Reset-Tokens", "6ms")
	d, ok := httptool.RetryDelay(h, time.Now())
	fmt.Println(d, ok)

	h = http.Header{}
	h.Set("Retry-After", "Wed, 21 Oct 2015 07:28:30 GMT")
	now := time.Date(2015, time.October, 21, 7, 28, 0, 0, time.UTC)
	d, ok = httptool.RetryDelay(h, now)
	fmt.Println(d, ok)
	// Output:
	// 1m2s true
	// 30s true
}

// A Google-style 429 states its retry delay only in its body, as a
// google.rpc.RetryInfo; ReadBody reads it as Execute does. An OpenAI
// insufficient_quota 429 is never retried.
func ExampleReadBody() {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	google := []byte(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Quota exceeded",
		"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"13s"}]}}`)
	o := httptool.ReadBody(http.StatusTooManyRequests, http.Header{}, google, now)
	fmt.Println(o.Class, o.RetryAfter, o.HasRetryAfter)

	quota := []byte(`{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`)
	o = httptool.ReadBody(http.StatusTooManyRequests, http.Header{}, quota, now)
	fmt.Println(o.Class, o.Class.Retryable())
	// Output:
	// rate_limited 13s true
	// quota_exhausted false
}

// A simulated Anthropic-style 429 whose headers are given as values:
// ReadValues reads them as Read reads the headers Write writes, without
// building them.
func ExampleReadValues() {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	v := httptool.Headers{RetryAfter: 3 * time.Second, HasRetryAfter: true}
	v.Anthropic[httptool.AnthropicRequests] = httptool.Limit{Sent: true, Limit: 50, Remaining: 0, ResetAt: now.Add(3 * time.Second)}
	o := httptool.ReadValues(http.StatusTooManyRequests, &v, now)
	fmt.Println(o.Class, o.RetryAfter, o.Quota.Requests.Remaining, o.Quota.Requests.Reset)

	h := http.Header{}
	v.Write(h)
	fmt.Println(h.Get("Retry-After"), h.Get("Anthropic-Ratelimit-Requests-Reset"), httptool.Read(http.StatusTooManyRequests, h, now) == o)
	// Output:
	// rate_limited 3s 0 3s
	// 3 2026-01-02T03:04:08Z true
}
