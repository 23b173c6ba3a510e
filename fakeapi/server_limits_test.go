package fakeapi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

// guard is how long a test waits on a socket before calling the server
// stuck. It only stops a broken test from hanging; the tests assert on
// what the connection did (closed by the server), never on elapsed time.
const guard = 20 * time.Second

// dial opens a raw connection to a server URL ("http://host:port/…").
func dial(t *testing.T, url string) net.Conn {
	t.Helper()
	host, _, _ := strings.Cut(strings.TrimPrefix(url, "http://"), "/")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(guard)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// closedByServer reads until the server closes the connection and returns
// what it sent; it fails the test when the guard deadline passes first.
func closedByServer(t *testing.T, conn net.Conn) string {
	t.Helper()
	b, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the connection open for %v (read so far: %q)", guard, b)
	}
	return string(b)
}

func TestServerClosesSlowBody(t *testing.T) {
	s, _ := startServer(t, ServerConfig{ReadTimeout: 100 * time.Millisecond, Services: []ServiceConfig{{Config: spec.Config{Name: "api"}}}})
	conn := dial(t, s.URL("api"))
	// Headers promising 100 bytes of body, then only one byte.
	fmt.Fprintf(conn, "POST /api/items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	got := closedByServer(t, conn)
	if !strings.HasPrefix(got, "HTTP/1.1 408") {
		t.Errorf("a body that never arrived got %q, want a 408 before the close", got)
	}
}

func TestServerClosesSlowHeaders(t *testing.T) {
	s, _ := startServer(t, ServerConfig{ReadHeaderTimeout: 100 * time.Millisecond, Services: []ServiceConfig{{Config: spec.Config{Name: "api"}}}})
	conn := dial(t, s.URL("api"))
	fmt.Fprintf(conn, "GET /api/items HTTP/1.1\r\nHost: x\r\n") // the blank line never comes
	closedByServer(t, conn)
}

func TestServerClosesIdleKeepAlive(t *testing.T) {
	s, _ := startServer(t, ServerConfig{IdleTimeout: 100 * time.Millisecond, Services: []ServiceConfig{{Config: spec.Config{Name: "api"}}}})
	conn := dial(t, s.URL("api"))
	fmt.Fprintf(conn, "GET /api/items HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Close {
		t.Fatalf("first request: %d, close %v; want 200 on a kept-alive connection", res.StatusCode, res.Close)
	}
	// The connection now idles; the server must close it.
	rest, err := io.ReadAll(br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept an idle connection open for %v", guard)
	}
	if len(rest) != 0 {
		t.Errorf("unexpected bytes on the idle connection: %q", rest)
	}
}

func TestServerBoundsConnections(t *testing.T) {
	s, _ := startServer(t, ServerConfig{MaxConns: 1, Services: []ServiceConfig{{Config: spec.Config{Name: "api"}}}})
	first := dial(t, s.URL("api"))
	fmt.Fprintf(first, "GET /api/items HTTP/1.1\r\nHost: x\r\n\r\n")
	if res, err := http.ReadResponse(bufio.NewReader(first), nil); err != nil || res.StatusCode != 200 {
		t.Fatalf("first connection: %v", err)
	}
	// The second connection waits to be accepted while the first is open:
	// its request is not served.
	second := dial(t, s.URL("api"))
	fmt.Fprintf(second, "GET /api/items HTTP/1.1\r\nHost: x\r\n\r\n")
	second.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, err := second.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("a connection beyond MaxConns was served (%d bytes, %v)", n, err)
	}
	first.Close()
	second.SetReadDeadline(time.Now().Add(guard))
	res, err := http.ReadResponse(bufio.NewReader(second), nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("second connection after the first closed: %v", err)
	}
	res.Body.Close()
	second.Close()
}

func TestServerResetNeedsKey(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{
		{Config: spec.Config{Name: "open"}},
		{Config: spec.Config{Name: "llm", Keys: []spec.Key{{Key: "sk-1"}}}},
	}})
	do(t, c, "GET", s.URL("open")+"/items/1", "")
	reset := strings.TrimSuffix(s.StatsURL(), StatsPath) + ResetPath
	tests := []struct {
		name   string
		header []string
		want   int
	}{
		{"no key", nil, 401},
		{"unknown key", []string{"Authorization", "Bearer sk-nope"}, 403},
		{"a service's key", []string{"Authorization", "Bearer sk-1"}, 200},
	}
	for _, tt := range tests {
		r := do(t, c, "POST", reset, "", tt.header...)
		if r.status != tt.want {
			t.Errorf("%s: reset answered %d, want %d", tt.name, r.status, tt.want)
		}
		if tt.want != 200 {
			if st := s.Stats(); st.Services["open"].Arrived != 1 {
				t.Errorf("%s: a refused reset cleared the accounting: %+v", tt.name, st.Services["open"])
			}
			msg, _ := r.body["error"].(map[string]any)["message"].(string)
			if !strings.Contains(msg, "API key") {
				t.Errorf("%s: message %q does not say a key is needed", tt.name, msg)
			}
		}
	}
	if st := s.Stats(); st.Services["open"].Arrived != 0 {
		t.Errorf("reset with a key left %+v", st.Services["open"])
	}
}

func TestServerNonLoopbackIsErrNonLoopback(t *testing.T) {
	_, err := Start(ServerConfig{Addr: "0.0.0.0:0", Services: []ServiceConfig{{Config: spec.Config{Name: "a"}}}})
	if !errors.Is(err, ErrNonLoopback) {
		t.Fatalf("Start(0.0.0.0) = %v, want ErrNonLoopback", err)
	}
}
