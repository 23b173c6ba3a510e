package quota_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/simbench/simbench/internal/redisproc"
	"github.com/simbench/simbench/internal/redistest"
	"github.com/simbench/simbench/sched/quota"
	"go.uber.org/goleak"
)

// server is a redis-server subprocess on a loopback port.
type server struct {
	port int
	proc *redisproc.Server
}

// shared is the package's redis-server, started by TestMain.
var shared *server

// startServer runs redis-server on port (a free one if 0) without
// persistence and waits until it answers PING.
func startServer(port int) (*server, error) {
	p, err := redisproc.Start(port)
	if err != nil {
		return nil, err
	}
	return &server{port: p.Port, proc: p}, nil
}

func (s *server) addr() string { return s.proc.Addr() }

// client returns a new connection pool to s (a "process").
func (s *server) client() *redis.Client {
	return quota.NewClient(&redis.Options{Addr: s.addr(), DialTimeout: 200 * time.Millisecond})
}

func (s *server) stop() { s.proc.Stop() }

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
	if os.Getenv(workerEnv) != "" {
		os.Exit(worker()) // a fleet member re-executed by TestLongFleetSharesOneLimit
	}
	var err error
	if shared, err = startServer(0); err != nil {
		// Every test here needs the server: skip the package, or under
		// CI=true fail it.
		if redistest.Strict() {
			fmt.Fprintln(os.Stderr, "quota tests need a real redis-server (CI=true, so they fail instead of skipping):", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "skipping sched/quota's tests, which need a real redis-server: %v; install it with %s\n", err, redisproc.Install)
		os.Exit(0)
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
