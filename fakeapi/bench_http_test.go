package fakeapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/proc"
	"github.com/simbench/simbench/spec"
)

// BenchmarkHTTPServer compares, in one run, requests per second over
// loopback against the fakeapi server (a zero-latency, unlimited generic
// service) and against a bare net/http handler answering a JSON body of the
// same kind. It reports both rates and their ratio (target ≥ 0.7).
func BenchmarkHTTPServer(b *testing.B) {
	fakeURL, bareURL := servePair(b, spec.HeadersNone)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	post := func(url string) {
		if err := postSearch(c, url); err != nil {
			b.Fatal(err)
		}
	}
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

// BenchmarkHTTPStream measures streamed answers over loopback from a
// zero-latency, unlimited service, for chat completions, the Responses API
// and Anthropic messages: each iteration sends one request of 256 output
// tokens with stream: true and reads every event. It reports the tokens
// actually delivered in content deltas per second (each delta parsed as
// JSON, as a client does) and the streams per second.
func BenchmarkHTTPStream(b *testing.B) {
	// Answers of max_tokens each, as the benchmark counts them.
	whole := AgentConfig{Answer: spec.Constant(256.0)}
	s, err := Start(ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "llm"}, Agent: whole},
		{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic}, Agent: whole}}})
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
	for _, bb := range []struct {
		name, url, body string
	}{
		{"chat", s.SDKBaseURL("llm") + "/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":256,"stream":true}`},
		{"responses", s.SDKBaseURL("llm") + "/responses", `{"input":"hi","max_output_tokens":256,"stream":true}`},
		{"messages", s.SDKBaseURL("claude") + "/v1/messages", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":256,"stream":true}`},
	} {
		b.Run(bb.name, func(b *testing.B) {
			var tokens int64
			t0 := time.Now()
			for range b.N {
				res, err := c.Post(bb.url, "application/json", strings.NewReader(bb.body))
				if err != nil {
					b.Fatal(err)
				}
				n, err := countDeltas(res.Body)
				res.Body.Close()
				if err != nil || res.StatusCode != 200 || n != outTokens {
					b.Fatalf("status %d, %d deltas, %v", res.StatusCode, n, err)
				}
				tokens += n
			}
			elapsed := time.Since(t0).Seconds()
			b.ReportMetric(float64(tokens)/elapsed, "tokens/s")
			b.ReportMetric(float64(b.N)/elapsed, "streams/s")
		})
	}
}

// countDeltas reads a stream's events and counts the non-empty text deltas
// of any of the three shapes (chat chunks, output_text.delta, text_delta).
func countDeltas(r io.Reader) (int64, error) {
	var n int64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: {"))
		if !ok {
			continue
		}
		var ev struct {
			Type    string `json:"type"`
			Delta   json.RawMessage
			Choices []struct {
				Delta struct{ Content string }
			}
		}
		if err := json.Unmarshal(append([]byte("{"), data...), &ev); err != nil {
			return n, err
		}
		switch {
		case len(ev.Choices) > 0 && ev.Choices[0].Delta.Content != "":
			n++
		case ev.Type == "response.output_text.delta":
			n++
		case ev.Type == "content_block_delta" && bytes.Contains(ev.Delta, []byte(`"text_delta"`)):
			n++
		}
	}
	return n, sc.Err()
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
		Config: spec.Config{Name: "llm",
			Generation: spec.Generation{TokensPerSecond: spec.Dist[float64]{Kind: spec.DistConstant, Value: tps}}},
		Agent: AgentConfig{Answer: spec.Constant(float64(outTokens))}, // answers of max_tokens each
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

// saturationClients is how many clients BenchmarkHTTPSaturation runs at
// once, each sending its next request as soon as the last is answered.
const saturationClients = 32

// BenchmarkHTTPSaturation pairs the fakeapi server (a zero-latency,
// unlimited generic service with its rate-limit headers) with a bare
// net/http handler answering a JSON body of the same kind, at saturation:
// saturationClients clients in this process over loopback, one Transport
// keeping a connection per client. Each iteration sends a block of
// requests to each server in turn, so that drift in the machine's load
// affects both alike. It reports each one's requests per second of the
// wall clock and CPU µs per request (the whole process's CPU over the
// block, the clients' included, which are the same for both), and the
// ratios fakeapi/bare: ratio (of req/s, better higher) is the figure to
// gate (target ≥ 0.9); cpu/req-ratio is better lower.
// The sub-benchmarks run one server alone, for profiles.
func BenchmarkHTTPSaturation(b *testing.B) {
	fakeURL, bareURL := servePair(b, "")
	tr := &http.Transport{MaxIdleConnsPerHost: saturationClients}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	post := func(url string) error { return postSearch(c, url) }
	// block sends n requests to url from saturationClients clients.
	block := func(url string, n int) error {
		var next atomic.Int64
		errs := make(chan error, saturationClients)
		for range saturationClients {
			go func() {
				var err error
				for next.Add(1) <= int64(n) && err == nil {
					err = post(url)
				}
				errs <- err
			}()
		}
		var first error
		for range saturationClients {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	targets := []struct{ name, url string }{
		{"bare", bareURL},
		{"fakeapi", fakeURL},
	}
	for _, t := range targets {
		if err := block(t.url, saturationClients); err != nil { // one connection per client
			b.Fatal(err)
		}
	}
	const perBlock = 2000
	b.Run("alternating", func(b *testing.B) {
		var wall, cpu [2]time.Duration
		for b.Loop() {
			for k, t := range targets {
				c0, w0 := proc.SelfCPU(), time.Now()
				if err := block(t.url, perBlock); err != nil {
					b.Fatal(err)
				}
				wall[k] += time.Since(w0)
				cpu[k] += proc.SelfCPU() - c0
			}
		}
		n := float64(b.N * perBlock)
		rate := func(k int) float64 { return n / wall[k].Seconds() }
		perReq := func(k int) float64 { return float64(cpu[k]) / n / 1e3 }
		for k, t := range targets {
			b.ReportMetric(rate(k), t.name+"-req/s")
			b.ReportMetric(perReq(k), t.name+"-cpu-us/req")
		}
		b.ReportMetric(rate(1)/rate(0), "ratio") // req/s, as BenchmarkHTTPServer's: better higher
		b.ReportMetric(perReq(1)/perReq(0), "cpu/req-ratio")
		b.ReportMetric(0, "ns/op") // an iteration runs both servers: its time means nothing alone
	})
	for _, t := range targets {
		b.Run(t.name, func(b *testing.B) {
			for b.Loop() {
				if err := block(t.url, perBlock); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*perBlock)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// servePair starts, until b ends, the fakeapi server with one unlimited
// generic service "tool" (rate-limit headers of the given style) and a bare
// net/http handler answering a JSON body of the same kind, and returns the
// URL of /search on each.
func servePair(b *testing.B, headers spec.HeaderStyle) (fakeURL, bareURL string) {
	b.Helper()
	s, err := Start(ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "tool", Headers: headers}}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx) //nolint:errcheck // benchmark teardown
	})
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
	b.Cleanup(func() { bare.Close(); <-done })
	return s.URL("tool") + "/search", "http://" + ln.Addr().String() + "/search"
}

// postSearch posts a small JSON body to url with c, drains the answer for
// the connection's reuse and wants status 200.
func postSearch(c *http.Client, url string) error {
	res, err := c.Post(url, "application/json", strings.NewReader(`{"q":"x"}`))
	if err != nil {
		return err
	}
	io.Copy(io.Discard, res.Body) //nolint:errcheck // drained for reuse
	res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("%s: status %d", url, res.StatusCode)
	}
	return nil
}
