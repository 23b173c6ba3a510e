// Package redistest starts a real redis-server for tests: without one on
// PATH a test skips saying what to install, and under CI=true it fails
// instead, so CI never passes by skipping.
package redistest

import (
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/simbench/simbench/internal/redisproc"
	"github.com/simbench/simbench/sched/quota"
)

// Strict reports whether a missing redis-server fails tests (CI=true).
func Strict() bool { return os.Getenv("CI") == "true" }

// Start returns a redis-server on a free loopback port, stopped when the
// test ends. Without redis-server on PATH it skips the test (fails it
// under CI=true) with what to install.
func Start(tb testing.TB) *redisproc.Server {
	tb.Helper()
	s, err := redisproc.Start(0)
	if err != nil {
		Missing(tb, err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// Missing skips tb (fails it under CI=true) because redis-server could not
// be started.
func Missing(tb testing.TB, err error) {
	tb.Helper()
	if Strict() {
		tb.Fatalf("this test needs a real redis-server (CI=true, so it fails instead of skipping): %v", err)
	}
	tb.Skipf("skipped: this test needs a real redis-server: %v; install it with %s", err, redisproc.Install)
}

// Client returns a client of the redis-server at url (a redis:// URL),
// built as the shared quota builds its own (quota.NewClient), closed when
// the test ends.
func Client(tb testing.TB, url string) *redis.Client {
	tb.Helper()
	o, err := quota.ParseURL(url)
	if err != nil {
		tb.Fatal(err)
	}
	c := quota.NewClient(o)
	tb.Cleanup(func() { c.Close() })
	return c
}
