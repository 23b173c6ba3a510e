package quota_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/simbench/simbench/internal/redistest"
	. "github.com/simbench/simbench/sched/quota"
)

// hungLimit is the bucket the hung-peer tests reserve from.
var hungLimit = Limit{Key: "hung", Service: "s", Kind: "rpm", PerMinute: 600, Burst: 30}

// slowOptions are client options whose own timeouts are a minute long, so
// that only the context deadline (Failover's Timeout) can end a round trip
// to a hung peer in time.
func slowOptions(addr string) *redis.Options {
	return &redis.Options{Addr: addr, DialTimeout: time.Minute, ReadTimeout: time.Minute, WriteTimeout: time.Minute}
}

// silentListener returns the address of a loopback listener that never
// accepts: the kernel completes each connection (the backlog), and no byte
// is ever answered, as with a server that hangs.
func silentListener(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// pausedServer returns a source of Failovers on a redis-server stopped
// with SIGSTOP (resumed when tb ends): each one is made while the server
// runs and has its connections open and one reservation granted by Redis,
// then the server is stopped, so that it holds pooled connections to a
// server that reads nothing.
func pausedServer(tb testing.TB) func() *Failover {
	tb.Helper()
	srv := redistest.Start(tb)
	c := NewClient(slowOptions(srv.Addr()))
	tb.Cleanup(func() { c.Close() })
	tb.Cleanup(func() { _ = srv.Resume() })
	return func() *Failover {
		if err := srv.Resume(); err != nil {
			tb.Fatal(err)
		}
		f := &Failover{Primary: NewRedis(c), Processes: 2}
		if r, err := f.Reserve(context.Background(), hungLimit, 1, 0); err != nil || !r.OK || r.Mark.Local() {
			tb.Fatalf("before the stop: %+v, %v", r, err)
		}
		if err := srv.Pause(); err != nil {
			tb.Fatal(err)
		}
		return f
	}
}

// hungPeers are the two hung peers, each returning a source of Failovers
// whose next reservation meets a hung peer, and the budget that
// reservation falls back within: on a silent listener a Failover's first
// reservation waits for its connections (DefaultDialTimeout); on a
// SIGSTOPped redis-server its connections are open, and a round trip waits
// out DefaultTimeout.
var hungPeers = []struct {
	name     string
	failover func(testing.TB) func() *Failover
	budget   time.Duration
}{
	{"silent-listener", func(tb testing.TB) func() *Failover {
		c := NewClient(slowOptions(silentListener(tb)))
		tb.Cleanup(func() { c.Close() })
		return func() *Failover { return &Failover{Primary: NewRedis(c), Processes: 2} }
	}, DefaultDialTimeout},
	{"sigstopped-redis", pausedServer, DefaultTimeout},
}

// fallBack makes one reservation through f and returns how long it took;
// it fails tb unless the reservation was granted by the local fallback
// after one failed round trip (or connect) and one switch.
func fallBack(tb testing.TB, f *Failover) time.Duration {
	tb.Helper()
	before := f.Stats()
	start := time.Now()
	r, err := f.Reserve(context.Background(), hungLimit, 1, 0)
	took := time.Since(start)
	f.Close()
	if err != nil || !r.OK || !r.Mark.Local() {
		tb.Fatalf("Reserve against a hung peer: %+v, %v; want a grant from the local fallback", r, err)
	}
	if st := f.Stats(); st.Switches-before.Switches != 1 || st.FallbackGrants-before.FallbackGrants != 1 || st.PrimaryErrors-before.PrimaryErrors != 1 {
		tb.Fatalf("stats %+v (before %+v): want one failed round trip, one switch, one fallback grant", st, before)
	}
	return took
}

// TestFailoverHungPeer checks that a Reserve against a peer that never
// answers (a silent listener, a SIGSTOPped redis-server) falls back to the
// local bucket after one failed round trip (or connect), with the
// client's own timeouts a minute long. It times nothing: TestLongFailoverHungPeerWithinTwiceTimeout
// (long tag) and BenchmarkFailoverHungPeer measure how soon the context
// deadline ends the round trip.
func TestFailoverHungPeer(t *testing.T) {
	for _, tt := range hungPeers {
		t.Run(tt.name, func(t *testing.T) {
			fallBack(t, tt.failover(t)())
		})
	}
}

// TestRedisRefusesClientIgnoringDeadlines checks that a Redis backend on a
// go-redis client built without ContextTimeoutEnabled panics, naming the
// fix, instead of letting a hung server hold each round trip for seconds.
func TestRedisRefusesClientIgnoringDeadlines(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: silentListener(t)})
	defer c.Close()
	defer func() {
		if p, _ := recover().(string); p == "" || !strings.Contains(p, "quota.NewClient") {
			t.Fatalf("panic %q, want one naming quota.NewClient", p)
		}
	}()
	_, _ = NewRedis(c).Reserve(context.Background(), hungLimit, 1, 0)
	t.Fatal("Reserve on a client ignoring deadlines did not panic")
}

// TestNewClientOptions checks what NewClient sets and keeps.
func TestNewClientOptions(t *testing.T) {
	give := &redis.Options{Addr: "127.0.0.1:1", MaxRetries: 2}
	c := NewClient(give)
	defer c.Close()
	o := c.Options()
	if !o.ContextTimeoutEnabled || o.MaxRetries != 2 || o.DialTimeout != DefaultDialTimeout || give.ContextTimeoutEnabled {
		t.Fatalf("options %+v (given %+v): want deadlines honoured, MaxRetries kept, the default dial timeout, the given options untouched", o, give)
	}
	d := NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer d.Close()
	if d.Options().MaxRetries != 0 { // go-redis keeps -1 (no retries) as 0, and 0 (its default) as 3
		t.Fatalf("MaxRetries %d, want no retries when none is given", d.Options().MaxRetries)
	}
}

// TestParseURL checks that only Redis URLs are read.
func TestParseURL(t *testing.T) {
	tests := []struct {
		give string
		ok   bool
	}{
		{"redis://127.0.0.1:6379", true},
		{"rediss://user:pw@127.0.0.1:6380/2", true},
		{"http://127.0.0.1:6379", false},
		{"127.0.0.1:6379", false},
		{"redis://127.0.0.1:6379/notadb", false},
	}
	for _, tt := range tests {
		if _, err := ParseURL(tt.give); (err == nil) != tt.ok {
			t.Errorf("ParseURL(%q): %v, want ok %v", tt.give, err, tt.ok)
		}
	}
}

// BenchmarkFailoverHungPeer measures how long a Reserve takes to fall back
// when the peer hangs, at the default timeouts: fallback-ms per
// reservation and its ratio to the peer's budget (×budget: the dial
// budget on a silent listener, the round trip's on a SIGSTOPped server;
// docs/library.md promises at most 2).
func BenchmarkFailoverHungPeer(b *testing.B) {
	for _, tt := range hungPeers {
		b.Run(tt.name, func(b *testing.B) {
			next := tt.failover(b)
			var total time.Duration
			for b.Loop() {
				b.StopTimer()
				f := next()
				b.StartTimer()
				total += fallBack(b, f)
			}
			per := total / time.Duration(b.N)
			b.ReportMetric(float64(per.Microseconds())/1000, "fallback-ms")
			b.ReportMetric(float64(per)/float64(tt.budget), "×budget")
		})
	}
}
