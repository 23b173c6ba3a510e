package quota

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// server is a redis-server subprocess on a loopback port.
type server struct {
	port int
	cmd  *exec.Cmd
}

// shared is the package's redis-server, started by TestMain.
var shared *server

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startServer runs redis-server on port (a free one if 0) without
// persistence and waits until it answers PING.
func startServer(port int) (*server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not found on PATH: install it (apt-get install redis-server): %w", err)
	}
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{port: port, cmd: cmd}
	c := s.client()
	defer c.Close()
	for range 200 {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err = c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return s, nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	s.stop()
	return nil, fmt.Errorf("redis-server on port %d never answered: %w", port, err)
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// client returns a new connection pool to s (a "process").
func (s *server) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
}

func (s *server) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// testClient returns a client of the shared server closed with the test,
// after flushing the server so each test starts with empty buckets.
func testClient(tb testing.TB) *redis.Client {
	tb.Helper()
	c := shared.client()
	tb.Cleanup(func() { c.Close() })
	if err := c.FlushAll(context.Background()).Err(); err != nil {
		tb.Fatal(err)
	}
	return c
}

// quiet drops go-redis's log lines (dial failures are expected while a
// test has killed its server).
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	var err error
	if shared, err = startServer(0); err != nil {
		fmt.Fprintln(os.Stderr, "quota tests need a real redis-server:", err)
		os.Exit(1)
	}
	code := m.Run()
	shared.stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
