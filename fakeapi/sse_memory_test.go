package fakeapi

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// maxIdleStreamBytes is what an open, idle stream may hold on the server:
// its handler's stack and buffers and one group of events.
const maxIdleStreamBytes = 64 << 10

// idleStreamBytes opens n streamed chat completions of out output tokens
// against a service whose answers take an hour, so that every stream sits
// waiting between groups, and returns the server's heap and stack bytes per
// open stream (after a collection, against the same before any). The
// clients are raw loopback connections that write their request and read
// nothing, so they add little to the figure.
func idleStreamBytes(tb testing.TB, n, out int) float64 {
	tb.Helper()
	s, err := Start(ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "llm",
		Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: time.Hour}},
		Agent: AgentConfig{Answer: spec.Constant(float64(out))}}}}) // answers of all out tokens
	if err != nil {
		tb.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx) // the streams are cut off: expected
	}()
	host := strings.TrimPrefix(s.listeners[0].url, "http://")
	body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":%d,"stream":true}`, out)
	req := fmt.Sprintf("POST /llm/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	before := heapAndStacks()
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := net.Dial("tcp", host)
		if err != nil {
			tb.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := c.Write([]byte(req)); err != nil {
			tb.Fatal(err)
		}
	}
	for s.Stats().Services["llm"].InFlight < n { // every request has reached its stream
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // and rendered its first group
	return (heapAndStacks() - before) / float64(n)
}

// heapAndStacks is the bytes of live heap objects and goroutine stacks,
// after a collection.
func heapAndStacks() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc + m.StackInuse)
}

// TestIdleStreamMemory checks that an open stream waiting between its
// groups holds at most maxIdleStreamBytes on the server, for an answer of
// 1,000 tokens (about 250 KB of events, which a stream used to hold whole
// for its latency) and of the most pieces an answer has.
func TestIdleStreamMemory(t *testing.T) {
	for _, out := range []int{1000, wire.MaxAnswerPieces} {
		if per := idleStreamBytes(t, 200, out); per > maxIdleStreamBytes {
			t.Errorf("%d-token streams: %.0f bytes each while idle, want at most %d", out, per, maxIdleStreamBytes)
		}
	}
}

// BenchmarkIdleStreamMemory reports the server's bytes per open, idle
// stream (heap and stacks, B/stream) for 1,000 streams of 1,000-token
// answers; the bound is maxIdleStreamBytes.
func BenchmarkIdleStreamMemory(b *testing.B) {
	var per float64
	for b.Loop() {
		per = idleStreamBytes(b, 1000, 1000)
	}
	b.ReportMetric(per, "B/stream")
	b.ReportMetric(per/maxIdleStreamBytes, "×bound")
}
