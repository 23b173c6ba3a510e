package fakeapi

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkHTTPServer compares, in one run, requests per second over
// loopback against the fakeapi server (a zero-latency, unlimited generic
// service) and against a bare net/http handler answering a JSON body of the
// same kind. It reports both rates and their ratio (target ≥ 0.7).
func BenchmarkHTTPServer(b *testing.B) {
	s, err := Start(ServerConfig{Services: []ServiceConfig{{Name: "tool", Headers: HeadersNone}}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx) //nolint:errcheck // benchmark teardown
	}()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	bare := &http.Server{ReadHeaderTimeout: 30 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) //nolint:errcheck // benchmark handler
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true,"id":"1","service":"tool","path":"/search","tokens":0}`+"\n") //nolint:errcheck // benchmark handler
	})}
	done := make(chan struct{})
	go func() { defer close(done); bare.Serve(ln) }() //nolint:errcheck // ErrServerClosed
	defer func() { bare.Close(); <-done }()

	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	post := func(url string) {
		res, err := c.Post(url, "application/json", strings.NewReader(`{"q":"x"}`))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body) //nolint:errcheck // drained for reuse
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("%s: status %d", url, res.StatusCode)
		}
	}
	bareURL, fakeURL := "http://"+ln.Addr().String()+"/search", s.URL("tool")+"/search"
	post(bareURL)
	post(fakeURL)

	var tBare, tFake time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		post(bareURL)
		t1 := time.Now()
		post(fakeURL)
		tBare += t1.Sub(t0)
		tFake += time.Since(t1)
	}
	b.StopTimer()
	bareRate, fakeRate := float64(b.N)/tBare.Seconds(), float64(b.N)/tFake.Seconds()
	b.ReportMetric(bareRate, "bare-req/s")
	b.ReportMetric(fakeRate, "fakeapi-req/s")
	b.ReportMetric(fakeRate/bareRate, "ratio")
}

// BenchmarkHTTPStream measures streamed chat completions over loopback from
// a zero-latency, unlimited OpenAI-style service: each iteration sends one
// request with stream: true and reads the events to [DONE]. It reports the
// completion tokens delivered per second (as the streams' usage counts
// them: 256 each) and the streams per second.
func BenchmarkHTTPStream(b *testing.B) {
	s, err := Start(ServerConfig{Services: []ServiceConfig{{Name: "llm"}}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx) //nolint:errcheck // benchmark teardown
	}()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	const outTokens = 256
	body := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":256,"stream":true}`
	url := s.URL("llm") + "/v1/chat/completions"
	b.ResetTimer()
	t0 := time.Now()
	for range b.N {
		res, err := c.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		all, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || !strings.HasSuffix(string(all), "data: [DONE]\n\n") {
			b.Fatalf("status %d, %v: %q", res.StatusCode, err, all)
		}
	}
	elapsed := time.Since(t0).Seconds()
	b.StopTimer()
	b.ReportMetric(float64(b.N)*outTokens/elapsed, "tokens/s")
	b.ReportMetric(float64(b.N)/elapsed, "streams/s")
}

// BenchmarkHTTPStreamPaced measures how closely a paced stream keeps to its
// configured rate on loopback: a service generating 2000 output tokens per
// second with no time to first token answers 200-token streamed chat
// completions (100ms each), one at a time. It reports the tokens per second
// delivered (the usage's completion tokens over the time from sending the
// request to reading [DONE]), the configured rate, and their ratio (1: on
// pace; below 1: the server or the loopback adds time).
func BenchmarkHTTPStreamPaced(b *testing.B) {
	const tps, outTokens = 2000.0, 200
	s, err := Start(ServerConfig{Services: []ServiceConfig{{
		Name:       "llm",
		Generation: GenerationConfig{TokensPerSecond: RateConfig{Dist: DistConstant, Value: tps}},
	}}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx) //nolint:errcheck // benchmark teardown
	}()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	body := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":200,"stream":true}`
	url := s.URL("llm") + "/v1/chat/completions"
	b.ResetTimer()
	var streaming time.Duration
	for range b.N {
		t0 := time.Now()
		res, err := c.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		all, err := io.ReadAll(res.Body)
		streaming += time.Since(t0)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || !strings.HasSuffix(string(all), "data: [DONE]\n\n") {
			b.Fatalf("status %d, %v: %q", res.StatusCode, err, all)
		}
	}
	b.StopTimer()
	delivered := float64(b.N) * outTokens / streaming.Seconds()
	b.ReportMetric(delivered, "tokens/s")
	b.ReportMetric(tps, "configured-tokens/s")
	b.ReportMetric(delivered/tps, "pace-ratio")
}
