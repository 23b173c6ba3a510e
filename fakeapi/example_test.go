package fakeapi_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/spec"
)

// A simulator drives the model in virtual time: each arrival gets a
// decision, and each admission is later finished (or cancelled).
func ExampleModel() {
	m, err := fakeapi.NewModel(fakeapi.ServiceConfig{
		Config: spec.Config{Name: "llm",
			RPS:     2, // a token bucket of 2 requests, refilled at 2/s
			Headers: spec.HeadersOpenAI,
			Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 300 * time.Millisecond}},
	}, rand.New(rand.NewPCG(42, 1)))
	if err != nil {
		panic(err)
	}
	for _, now := range []time.Duration{0, 0, 0, 500 * time.Millisecond} {
		d := m.Arrive(now, fakeapi.Request{Client: "agent-1", Tokens: 100})
		if d.Admitted() {
			fmt.Printf("%v: %d, response after %v\n", now, d.Status, d.Latency)
			m.Finish(now+d.Latency, d.ID, false)
		} else {
			fmt.Printf("%v: %d by %v, retry after %v\n", now, d.Status, d.Limit, d.RetryAfter)
		}
	}
	s := m.Stats()
	fmt.Println("accepted", s.Accepted, "rate limited", s.RateLimited, "early retries", s.EarlyRetries)
	// Output:
	// 0s: 200, response after 300ms
	// 0s: 200, response after 300ms
	// 0s: 429 by rps, retry after 500ms
	// 500ms: 200, response after 300ms
	// accepted 3 rate limited 1 early retries 0
}

// Start serves fake services on a free loopback port; any HTTP client, or
// an official SDK given URL(service)+"/v1", can use them.
func ExampleStart() {
	s, err := fakeapi.Start(fakeapi.ServerConfig{Services: []fakeapi.ServiceConfig{
		{Config: spec.Config{Name: "llm", RPM: 1, Headers: spec.HeadersOpenAI}},
	}})
	if err != nil {
		panic(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx) //nolint:errcheck // nothing is in flight
	}()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	for range 2 {
		res, err := c.Post(s.URL("llm")+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, res.Body) //nolint:errcheck // example
		res.Body.Close()
		fmt.Println(res.StatusCode, res.Header.Get("X-Ratelimit-Remaining-Requests"), res.Header.Get("Retry-After") != "")
	}
	st := s.Stats().Services["llm"]
	fmt.Println("completed", st.Completed, "rate limited by rpm", st.RateLimitedBy["rpm"])
	// Output:
	// 200 0 false
	// 429 0 true
	// completed 1 rate limited by rpm 1
}

// A service whose account has 100 tokens of credit: the first request
// spends them, the next is refused with OpenAI's insufficient_quota, whose
// body and headers a simulator reads as a client would.
func ExampleDecision_RejectionBody() {
	cfg := fakeapi.ServiceConfig{Config: spec.Config{Name: "llm", API: spec.APIOpenAI, Faults: spec.Faults{Credit: 100}}}
	m, err := fakeapi.NewModel(cfg, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	first := m.Arrive(0, fakeapi.Request{Tokens: 100})
	m.Finish(time.Second, first.ID, false)
	d := m.Arrive(time.Second, fakeapi.Request{Tokens: 100})
	h := http.Header{}
	status := d.Answer(spec.APIOpenAI, spec.HeadersOpenAI, time.Unix(0, 0), h)
	c := m.Config()
	fmt.Println(first.Kind, d.Kind, status, h.Get(fakeapi.HeaderShouldRetry))
	fmt.Print(string(d.RejectionBody(&c, status)))
	// Output:
	// ok insufficient_quota 429 false
	// {"error":{"code":"insufficient_quota","message":"You exceeded your current quota on service llm, please check your plan and billing details. Waiting does not help: retry after adding credit.","param":null,"type":"insufficient_quota"}}
}
