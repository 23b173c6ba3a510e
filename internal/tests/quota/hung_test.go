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

// pausedServer returns a client of a redis-server that answered one
// reservation and was then stopped with SIGSTOP (resumed when tb ends), so
// the client holds a pooled connection to a server that reads nothing.
func pausedServer(tb testing.TB) *redis.Client {
	tb.Helper()
	srv := redistest.Start(tb)
	c := NewClient(slowOptions(srv.Addr()))
	tb.Cleanup(func() { c.Close() })
	if r, err := NewRedis(c).Reserve(context.Background(), hungLimit, 1, 0); err != nil || !r.OK {
		tb.Fatalf("before the stop: %+v, %v", r, err)
	}
	if err := srv.Pause(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = srv.Resume() })
	return c
}

// hungPeers are the two hung peers, each returning a client of one.
var hungPeers = []struct {
	name   string
	client func(testing.TB) *redis.Client
}{
	{"silent-listener", func(tb testing.TB) *redis.Client {
		c := NewClient(slowOptions(silentListener(tb)))
		tb.Cleanup(func() { c.Close() })
		return c
	}},
	{"sigstopped-redis", pausedServer},
}

// fallBack makes one reservation through a Failover at the default
// timeout on c and returns how long it took; it fails tb unless the
// reservation was granted by the local fallback after one switch.
func fallBack(tb testing.TB, c *redis.Client) time.Duration {
	tb.Helper()
	f := &Failover{Primary: NewRedis(c), Processes: 2}
	start := time.Now()
	r, err := f.Reserve(context.Background(), hungLimit, 1, 0)
	took := time.Since(start)
	if err != nil || !r.OK || !r.Mark.Local() {
		tb.Fatalf("Reserve against a hung peer: %+v, %v; want a grant from the local fallback", r, err)
	}
	if st := f.Stats(); st.Switches != 1 || st.FallbackGrants != 1 || st.PrimaryErrors != 1 {
		tb.Fatalf("stats %+v: want one failed round trip, one switch, one fallback grant", st)
	}
	return took
}

// TestFailoverHungPeer checks that a Reserve against a peer that never
// answers (a silent listener, a SIGSTOPped redis-server) falls back to the
// local bucket after one failed round trip, with the client's own timeouts
// a minute long. It times nothing: TestLongFailoverHungPeerWithinTwiceTimeout
// (long tag) and BenchmarkFailoverHungPeer measure how soon the context
// deadline ends the round trip.
func TestFailoverHungPeer(t *testing.T) {
	for _, tt := range hungPeers {
		t.Run(tt.name, func(t *testing.T) {
			fallBack(t, tt.client(t))
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
// when the peer hangs, at the default 50 ms timeout: fallback-ms per
// reservation and its ratio to the timeout (×timeout; the README promises
// at most 2).
func BenchmarkFailoverHungPeer(b *testing.B) {
	for _, tt := range hungPeers {
		b.Run(tt.name, func(b *testing.B) {
			c := tt.client(b)
			var total time.Duration
			for b.Loop() {
				total += fallBack(b, c)
			}
			per := total / time.Duration(b.N)
			b.ReportMetric(float64(per.Microseconds())/1000, "fallback-ms")
			b.ReportMetric(float64(per)/float64(DefaultTimeout), "×timeout")
		})
	}
}
