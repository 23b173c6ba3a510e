package fakeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/simbench/simbench/spec"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// manualClock is a model clock that moves only when the test says.
type manualClock struct{ ns atomic.Int64 }

func (c *manualClock) now() time.Duration      { return time.Duration(c.ns.Load()) }
func (c *manualClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// startServer starts a server on loopback, shut down when the test ends,
// and a client whose idle connections are closed then.
func startServer(t *testing.T, cfg ServerConfig) (*Server, *http.Client) {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	c := &http.Client{Transport: tr}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		tr.CloseIdleConnections()
	})
	return s, c
}

type response struct {
	status int
	header http.Header
	body   map[string]any
}

// do sends a request and decodes the JSON body, failing the test if the
// response is not JSON.
func do(t *testing.T, c *http.Client, method, url, body string, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s %s: status %d, body is not JSON: %q", method, url, res.StatusCode, b)
	}
	return response{res.StatusCode, res.Header, v}
}

// eventually polls cond until it holds; the deadline only stops a broken
// test from hanging, it is not a performance threshold.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("never: %s", what)
}

const chatBody = `{"model":"gpt-test","messages":[{"role":"user","content":"hello there"}],"max_tokens":20}`

func TestServerEarlyRetries(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{{Config: spec.Config{Name: "llm", RPS: 1, TPM: 100_000}}}})
	url := s.URL("llm") + "/v1/chat/completions"
	// X-Simbench-Client says the client sends one request at a time, so any
	// request before its delay has elapsed is an early retry.
	ok := do(t, c, "POST", url, chatBody, ClientHeader, "agent")
	if ok.status != 200 || ok.header.Get("X-Ratelimit-Remaining-Requests") != "0" || ok.header.Get("X-Ratelimit-Limit-Tokens") != "100000" {
		t.Fatalf("first: %d %v", ok.status, ok.header)
	}
	usage := ok.body["usage"].(map[string]any)
	// 41 bytes of messages: 11 prompt tokens (one per 4 bytes, rounded up), plus max_tokens 20.
	if usage["prompt_tokens"] != 11.0 || usage["completion_tokens"] != 20.0 {
		t.Fatalf("usage = %v", usage)
	}
	// A client that ignores Retry-After: two more at once.
	for i, wantEarly := range []int64{0, 1} {
		r := do(t, c, "POST", url, chatBody, ClientHeader, "agent")
		if r.status != 429 || r.header.Get("Retry-After") != "1" || r.header.Get("Retry-After-Ms") != "1000" {
			t.Fatalf("retry %d: %d %v", i, r.status, r.header)
		}
		msg := r.body["error"].(map[string]any)["message"].(string)
		if !strings.Contains(msg, "requests per second (RPS) on service llm: Limit 1,") {
			t.Fatalf("message %q does not name the limit", msg)
		}
		if got := s.Stats().Services["llm"].EarlyRetries; got != wantEarly {
			t.Fatalf("after retry %d early retries = %d, want %d", i, got, wantEarly)
		}
	}
	clk.advance(time.Second)
	if r := do(t, c, "POST", url, chatBody, ClientHeader, "agent"); r.status != 200 {
		t.Fatalf("on time: %d", r.status)
	}
	st := s.Stats().Services["llm"]
	if st.EarlyRetries != 1 || st.EarlyRetriesBy["client"] != 1 || st.RateLimitedBy["rps"] != 2 || st.Completed != 2 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestServerTwiceTheLimitHalfRejected(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{{Config: spec.Config{Name: "tool", RPS: 10, Headers: spec.HeadersStandard}}}})
	const n = 2000
	limited := 0
	for i := range n {
		r := do(t, c, "POST", s.URL("tool")+"/search", `{"q":"x"}`, ClientHeader, strconv.Itoa(i))
		switch r.status {
		case 429:
			limited++
		case 200:
		default:
			t.Fatalf("status %d", r.status)
		}
		clk.advance(50 * time.Millisecond) // 20/s against a limit of 10/s
	}
	if f := float64(limited) / n; f < 0.48 || f > 0.52 {
		t.Fatalf("429 fraction = %.3f, want 0.50 ± 0.02", f)
	}
	if got := s.Stats().Services["tool"].RateLimited; got != int64(limited) {
		t.Fatalf("server counted %d 429s, client saw %d", got, limited)
	}
}

// inFlightRequest starts a request in the background and waits until the
// service holds it; it returns a cancel for the request and a channel with
// its error.
func inFlightRequest(t *testing.T, s *Server, c *http.Client, service, path, body string) (context.CancelFunc, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", s.URL(service)+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		res, err := c.Do(req)
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	eventually(t, "request in flight", func() bool { return s.Stats().Services[service].InFlight == 1 })
	return cancel, done
}

func TestServerClientCancelIsNotWaste(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "slow", Headers: spec.HeadersNone,
		Latency: spec.Dist[time.Duration]{Value: time.Hour}}}}})
	cancel, done := inFlightRequest(t, s, c, "slow", "/job", `{"tokens":40}`)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("client error = %v, want context.Canceled", err)
	}
	eventually(t, "cancel counted", func() bool { return s.Stats().Services["slow"].CancelledByClient == 1 })
	st := s.Stats().Services["slow"]
	if st.Wasted != 0 || st.WastedWorkS != 0 || st.Completed != 0 || st.InFlight != 0 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestServerAbandonedResultIsWaste(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "slow", Headers: spec.HeadersNone,
		KeepWorkingOnDisconnect: true, Latency: spec.Dist[time.Duration]{Value: 100 * time.Millisecond}}}}})
	cancel, done := inFlightRequest(t, s, c, "slow", "/job", `{"tokens":40}`)
	cancel()
	<-done
	eventually(t, "waste counted", func() bool { return s.Stats().Services["slow"].Wasted == 1 })
	st := s.Stats().Services["slow"]
	// The server worked the full latency for nobody.
	if st.CancelledByClient != 0 || st.Completed != 0 || st.WastedTokens != 40 || st.WastedWorkS < 0.1 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestServerBadRequestsAreWellFormed(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{
		{Config: spec.Config{Name: "llm", MaxBodyBytes: 256, Keys: []spec.Key{{Key: "sk-1"}}}},
		{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic}},
	}})
	llm, claude := s.URL("llm"), s.URL("claude")
	auth := []string{"Authorization", "Bearer sk-1"}
	tests := []struct {
		name, method, url, body string
		header                  []string
		wantStatus              int
		wantInMessage           string
	}{
		{"no key", "POST", llm + "/v1/chat/completions", chatBody, nil, 401, "API key"},
		{"unknown key", "POST", llm + "/v1/chat/completions", chatBody, []string{"Authorization", "Bearer nope"}, 401, "API key"},
		{"x-api-key", "POST", llm + "/v1/chat/completions", chatBody, []string{"X-Api-Key", "sk-1"}, 200, ""},
		{"malformed", "POST", llm + "/v1/chat/completions", `{"messages": [`, auth, 400, "not valid JSON"},
		{"not an object", "POST", llm + "/v1/chat/completions", `[1]`, auth, 400, "not a JSON object"},
		{"no messages", "POST", llm + "/v1/chat/completions", `{"model":"m"}`, auth, 400, "messages is required"},
		{"streaming embeddings", "POST", llm + "/v1/embeddings", `{"input":"x","stream":true}`, auth, 400, "stream"},
		{"negative tokens", "POST", llm + "/v1/chat/completions", `{"messages":[1],"max_tokens":-1}`, auth, 400, "negative"},
		{"bad tokens header", "POST", llm + "/tool", `{}`, append([]string{TokensHeader, "many"}, auth...), 400, TokensHeader},
		{"oversized", "POST", llm + "/v1/chat/completions", `{"messages":"` + strings.Repeat("x", 300) + `"}`, auth, 413, "too large"},
		{"get on chat", "GET", llm + "/v1/chat/completions", "", auth, 405, "use POST"},
		{"unknown path", "GET", s.listeners[0].url + "/nope", "", nil, 404, "/llm/v1/chat/completions"},
		{"anthropic missing max_tokens", "POST", claude + "/v1/messages", `{"messages":[]}`, nil, 400, "max_tokens"},
		{"anthropic ok", "POST", claude + "/v1/messages", `{"messages":[],"max_tokens":5}`, nil, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, c, tt.method, tt.url, tt.body, tt.header...)
			if r.status != tt.wantStatus {
				t.Fatalf("status %d, want %d: %v", r.status, tt.wantStatus, r.body)
			}
			if tt.wantStatus == 200 {
				return
			}
			e, _ := r.body["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if !strings.Contains(msg, tt.wantInMessage) {
				t.Fatalf("error message %q does not contain %q", msg, tt.wantInMessage)
			}
		})
	}
	st := s.Stats()
	if e := st.Services["llm"].Errors; e["unauthorized"] != 2 || e["bad_request"] != 6 || e["too_large"] != 1 {
		t.Fatalf("llm errors = %v", e)
	}
	if st.NotFound != 1 {
		t.Fatalf("not found = %d", st.NotFound)
	}
}

func TestServerAnthropicHeadersAndShape(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, RPM: 1, TPM: 1000}}}})
	url := s.URL("claude") + "/v1/messages"
	body := `{"model":"claude-test","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	ok := do(t, c, "POST", url, body)
	if ok.status != 200 || ok.body["type"] != "message" || ok.header.Get("Anthropic-Ratelimit-Requests-Remaining") != "0" {
		t.Fatalf("ok: %d %v %v", ok.status, ok.header, ok.body)
	}
	r := do(t, c, "POST", url, body)
	if r.status != 429 || r.header.Get("Retry-After") != "60" || r.body["type"] != "error" {
		t.Fatalf("limited: %d %v %v", r.status, r.header, r.body)
	}
	if e := r.body["error"].(map[string]any); e["type"] != "rate_limit_error" {
		t.Fatalf("error = %v", e)
	}
	reset, err := time.Parse(time.RFC3339, r.header.Get("Anthropic-Ratelimit-Requests-Reset"))
	if err != nil {
		t.Fatal(err)
	}
	if got := reset.Sub(s.start.Truncate(time.Second)); got != time.Minute {
		t.Fatalf("requests reset %v after start, want 1m", got)
	}
}

func TestServerLyingMissingRetryAfter(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{{Config: spec.Config{Name: "llm", RPS: 1, Lie: spec.LieMissing}}}})
	do(t, c, "POST", s.URL("llm")+"/x", "")
	r := do(t, c, "POST", s.URL("llm")+"/x", "")
	if r.status != 429 || r.header.Get("Retry-After") != "" || r.header.Get("Retry-After-Ms") != "" {
		t.Fatalf("lying 429: %d %v", r.status, r.header)
	}
}

func TestServerPortPerServiceStatsAndReset(t *testing.T) {
	s, c := startServer(t, ServerConfig{PortPerService: true, Services: []ServiceConfig{{Config: spec.Config{Name: "a"}}, {Config: spec.Config{Name: "b"}}}})
	if s.URL("a") == s.URL("b") || !strings.HasPrefix(s.URL("a"), "http://127.0.0.1:") {
		t.Fatalf("URLs %q %q", s.URL("a"), s.URL("b"))
	}
	do(t, c, "GET", s.URL("a")+"/items/1", "")
	do(t, c, "PUT", s.URL("b")+"/items/1", `{"v":1}`)
	r := do(t, c, "GET", s.StatsURL(), "")
	svcs := r.body["services"].(map[string]any)
	if svcs["a"].(map[string]any)["completed"] != 1.0 || svcs["b"].(map[string]any)["completed"] != 1.0 {
		t.Fatalf("stats = %v", r.body)
	}
	if r := do(t, c, "POST", s.URL("b")+ResetPath, ""); r.status != 200 {
		t.Fatalf("reset: %d", r.status)
	}
	if st := s.Stats(); st.Services["a"].Completed != 0 || st.Services["b"].Arrived != 0 {
		t.Fatalf("after reset: %+v", st)
	}
	if r := do(t, c, "POST", s.StatsURL(), ""); r.status != 405 {
		t.Fatalf("POST stats: %d", r.status)
	}
}

func TestServerRefusesNonLoopback(t *testing.T) {
	_, err := Start(ServerConfig{Addr: "0.0.0.0:0", Services: []ServiceConfig{{Config: spec.Config{Name: "a"}}}})
	if err == nil || !strings.Contains(err.Error(), "AllowNonLoopback") {
		t.Fatalf("Start(0.0.0.0) = %v", err)
	}
}

func TestStartReportsEveryProblem(t *testing.T) {
	_, err := Start(ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "a", RPS: -1}}, {Config: spec.Config{Name: "a"}}, {Config: spec.Config{Name: "b/c"}}}})
	for _, want := range []string{"rps: is -1; it must not be negative", `"a" appears twice`, "path segment"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Start = %v, missing %q", err, want)
		}
	}
}

func TestServerHangResetAndShutdownDrain(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{
		{Config: spec.Config{Name: "hang", Faults: spec.Faults{HangRate: 1}}},
		{Config: spec.Config{Name: "reset", Faults: spec.Faults{ResetRate: 1}}},
		{Config: spec.Config{Name: "err", Faults: spec.Faults{ErrorRate: 1, ErrorStatus: 503}, Headers: spec.HeadersAnthropic}},
	}})
	cancel, done := inFlightRequest(t, s, c, "hang", "/x", "")
	cancel()
	<-done
	eventually(t, "hang cancelled", func() bool { return s.Stats().Services["hang"].CancelledByClient == 1 })

	res, err := c.Post(s.URL("reset")+"/x", "application/json", nil)
	if err == nil {
		res.Body.Close()
		t.Fatalf("reset service answered %d", res.StatusCode)
	}
	if r := do(t, c, "POST", s.URL("err")+"/x", ""); r.status != 503 || r.body["error"].(map[string]any)["type"] != "api_error" {
		t.Fatalf("error service: %d %v", r.status, r.body)
	}
	eventually(t, "reset counted", func() bool { return s.Stats().Services["reset"].Errors["reset"] == 1 })
	if st := s.Stats(); st.Services["hang"].Errors["hang"] != 1 || st.Services["err"].Errors["server_error"] != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestShutdownDrainsInFlight(t *testing.T) {
	s, err := Start(ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "slow", Latency: spec.Dist[time.Duration]{Value: 200 * time.Millisecond}}},
		{Config: spec.Config{Name: "hang", Faults: spec.Faults{HangRate: 1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	status := make(chan int, 2)
	for _, svc := range []string{"slow", "hang"} {
		go func() {
			res, err := c.Post(s.URL(svc)+"/x", "application/json", bytes.NewReader(nil))
			if err != nil {
				status <- 0
				return
			}
			res.Body.Close()
			status <- res.StatusCode
		}()
	}
	eventually(t, "both in flight", func() bool {
		st := s.Stats()
		return st.Services["slow"].InFlight == 1 && st.Services["hang"].InFlight == 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	got := map[int]bool{<-status: true, <-status: true}
	// The slow request drained with its answer; the hanging one was aborted.
	if !got[200] || !got[0] {
		t.Fatalf("statuses = %v, want 200 and an aborted connection", got)
	}
	if st := s.Stats(); st.Services["slow"].Completed != 1 || st.Services["hang"].CancelledByClient != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestSummaryAndWriteStats(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{
		{Config: spec.Config{Name: "llm", RPS: 1, Keys: []spec.Key{{Key: "sk-a"}, {Key: "sk-b"}}}},
		{Config: spec.Config{Name: "tool", Headers: spec.HeadersNone}},
	}})
	var sum strings.Builder
	s.Summary(&sum)
	for _, want := range []string{"llm          " + s.URL("llm") + "  (openai SDK base URL: " + s.URL("llm") + "/v1, OPENAI_BASE_URL=" + s.URL("llm") + "/v1)  keys: sk-a, sk-b\n",
		"tool         " + s.URL("tool") + "\n", "stats        " + s.StatsURL() + "\n"} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("Summary:\n%s\nmissing %q", sum.String(), want)
		}
	}
	for range 2 {
		do(t, c, "POST", s.URL("llm")+"/x", "", "X-Api-Key", "sk-a")
	}
	do(t, c, "POST", s.URL("llm")+"/x", "")
	var out strings.Builder
	WriteStats(&out, s.Stats())
	want := "llm: 3 arrived, 1 accepted, 1 completed, 1 rate limited (rps 1, rpm 0, tpm 0, concurrency 0)\n" +
		"  early retries 0, cancelled by client 0, wasted 0 (0.000s, 0 tokens), write races 0, peak concurrency 1\n" +
		"  errors: unauthorized 1\n" +
		"tool: 0 arrived, 0 accepted, 0 completed, 0 rate limited (rps 0, rpm 0, tpm 0, concurrency 0)\n" +
		"  early retries 0, cancelled by client 0, wasted 0 (0.000s, 0 tokens), write races 0, peak concurrency 0\n"
	if out.String() != want {
		t.Errorf("WriteStats:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestServerTimeScale(t *testing.T) {
	// One request per minute in the scenario's time, played 100 times
	// faster: the second request is refused and told to wait at most 600 ms
	// of real time (a minute of the scenario's), not a minute.
	s, c := startServer(t, ServerConfig{
		TimeScale: 0.01,
		Services:  []ServiceConfig{{Config: spec.Config{Name: "api", RPM: 1, Headers: spec.HeadersOpenAI}}},
	})
	url := s.URL("api") + "/tools/x"
	if r := do(t, c, "GET", url, ""); r.status != 200 {
		t.Fatalf("first request: %d", r.status)
	}
	r := do(t, c, "GET", url, "")
	if r.status != 429 {
		t.Fatalf("second request: %d, want 429", r.status)
	}
	ms, err := strconv.Atoi(r.header.Get("Retry-After-Ms"))
	if err != nil || ms < 1 || ms > 600 {
		t.Errorf("Retry-After-Ms %q, want 1..600 (a minute of scenario time × 0.01)", r.header.Get("Retry-After-Ms"))
	}
	if st := s.Stats().Services["api"]; st.RateLimited != 1 || st.Completed != 1 {
		t.Errorf("stats %+v", st)
	}
	if _, err := Start(ServerConfig{TimeScale: 2, Services: []ServiceConfig{{Config: spec.Config{Name: "x"}}}}); err == nil || !strings.Contains(err.Error(), "time scale 2") {
		t.Errorf("a time scale above 1 was accepted: %v", err)
	}
}

func TestServerResetEmptiesTheLimiters(t *testing.T) {
	for _, alg := range []spec.Algorithm{spec.SlidingWindow, spec.FixedWindow, spec.TokenBucket} {
		var clk manualClock
		s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{{Config: spec.Config{
			Name: "api", Headers: spec.HeadersStandard, RPM: 2, Algorithm: alg}}}})
		for range 2 {
			do(t, c, "POST", s.URL("api")+"/x", "{}")
		}
		if r := do(t, c, "POST", s.URL("api")+"/x", "{}"); r.status != 429 {
			t.Fatalf("%s: the third request in the minute got %d, want 429", alg, r.status)
		}
		if r := do(t, c, "POST", s.StatsURL()[:len(s.StatsURL())-len(StatsPath)]+ResetPath, ""); r.status != 200 {
			t.Fatalf("%s: reset: %d", alg, r.status)
		}
		// No time has passed: only the reset can let this one in.
		if r := do(t, c, "POST", s.URL("api")+"/x", "{}"); r.status != 200 {
			t.Errorf("%s: after the reset the service answered %d, want 200 at once", alg, r.status)
		}
	}
}

// A fixed window's edges count from the epoch, not from Start: a driver
// that sets the epoch at the start of its run sees the windows the model
// of that run sees. The epoch here is 50 s back, so a refused request is
// told to wait the 10 s left of the minute's window; windows counted from
// Start would make it wait about a minute.
func TestServerFixedWindowsStartAtEpoch(t *testing.T) {
	s, c := startServer(t, ServerConfig{
		Services: []ServiceConfig{{Config: spec.Config{Name: "api", RPM: 1, Algorithm: spec.FixedWindow, Headers: spec.HeadersOpenAI}}},
	})
	s.SetEpoch(time.Now().Add(-50 * time.Second))
	url := s.URL("api") + "/tools/x"
	if r := do(t, c, "GET", url, ""); r.status != 200 {
		t.Fatalf("first request: %d", r.status)
	}
	r := do(t, c, "GET", url, "")
	if r.status != 429 {
		t.Fatalf("second request: %d, want 429", r.status)
	}
	// Up to 10 s; a machine stalled for 20 s more could not tell.
	if ms, err := strconv.Atoi(r.header.Get("Retry-After-Ms")); err != nil || ms < 1 || ms > 30_000 {
		t.Errorf("Retry-After-Ms %q, want the 10 s left of the window begun at the epoch, not a minute", r.header.Get("Retry-After-Ms"))
	}
}
