package quota_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/simbench/simbench/internal/netns"
	. "github.com/simbench/simbench/sched/quota"
)

// distantLimit is the bucket the distant-Redis tests reserve from: large
// enough that every reservation is granted, so that only where it was
// granted (Redis or the fallback) varies.
func distantLimit(key string) Limit {
	return Limit{Key: key, Service: "s", Kind: "rpm", PerMinute: 600_000, Burst: 10_000}
}

// distantFailover returns a Failover over a Redis backend reached through
// a delaying proxy at rtt from the package's redis-server, built as a
// library user builds one: quota.NewClient on options giving only the
// address, and f's timeouts as set (zero: the library's defaults). The
// Failover and the client are closed when tb ends.
func distantFailover(tb testing.TB, rtt time.Duration, f *Failover) *netns.Proxy {
	tb.Helper()
	testClient(tb) // empty buckets
	p := startProxy(tb, shared.addr(), rtt)
	c := NewClient(&redis.Options{Addr: p.Addr()})
	f.Primary = &Redis{Client: c, Holder: "p1"}
	tb.Cleanup(func() { f.Close(); c.Close() })
	return p
}

// reserveEvery makes n reservations of one unit on f, one every gap (0:
// back to back), each from a fresh context.
func reserveEvery(tb testing.TB, f *Failover, lim Limit, n int, gap time.Duration) {
	tb.Helper()
	for range n {
		r, err := f.Reserve(context.Background(), lim, 1, 0)
		if err != nil || !r.OK {
			tb.Fatalf("Reserve: %+v, %v; want a grant", r, err)
		}
		if gap > 0 {
			time.Sleep(gap)
		}
	}
}

// TestFailoverDistantRedis reserves through a Redis 100 ms of RTT away at
// the library's defaults. Before the connections were opened off the
// reservations' path, the first reservation's dial, handshake and script
// load (four round trips) spent its timeout, and each probe dialled again
// within one: no reservation was ever granted by Redis. Now at most the
// reservations made while the first connections open fall back.
// TestLongFailoverDistantRedis holds the library to 95% at 30 and 100 ms.
func TestFailoverDistantRedis(t *testing.T) {
	f := &Failover{}
	distantFailover(t, 100*time.Millisecond, f)
	const n = 12
	reserveEvery(t, f, distantLimit("distant"), n, 0)
	if st := f.Stats(); st.PrimaryGrants < n-3 || st.PrimaryGrants+st.FallbackGrants != n {
		t.Fatalf("stats %+v: want at least %d of %d reservations granted by Redis", st, n-3, n)
	}
}

// outage is what an outage run saw.
type outage struct {
	st             Stats // at the end
	atRestore      Stats // when the proxy was restored
	atRecovery     Stats // when Failover switched back after the restore (zero if it did not)
	recovered      bool
	restored       bool  // the proxy was restored (recoveries before it are a busy machine's)
	downBeforeCut  bool  // a switch to the fallback happened before the cut
	grantsAfterRec int64 // of the reservations after the switch back
}

// cutter cuts the way to Redis and restores it: a delaying proxy, or a
// link between network namespaces.
type cutter interface {
	Cut()
	Restore()
}

// cutAndRestore reserves on f, whose Primary is reached through p, gap
// apart: before reservations, then cuts p for during reservations,
// restores it, and reserves until Failover switches back to Redis (at
// most maxAfter more) and after more. f must not have been used yet.
func cutAndRestore(t *testing.T, p cutter, f *Failover, before, during, maxAfter, after int, gap time.Duration) outage {
	t.Helper()
	var mu sync.Mutex
	var o outage
	f.OnSwitch = func(e Event) {
		if !e.Down {
			st := f.Stats()
			mu.Lock()
			if o.restored && !o.recovered {
				o.recovered, o.atRecovery = true, st
			}
			mu.Unlock()
		}
	}
	lim := distantLimit("outage")
	reserveEvery(t, f, lim, before, gap)
	o.downBeforeCut = f.Down()
	p.Cut()
	reserveEvery(t, f, lim, during, gap)
	o.atRestore = f.Stats()
	// A loaded machine can stretch a round trip past the timeout before
	// the cut too, and the Failover then falls back and recovers there:
	// only a switch back after the restore is the recovery measured.
	mu.Lock()
	o.restored = true
	mu.Unlock()
	p.Restore()
	for range maxAfter {
		mu.Lock()
		rec := o.recovered
		mu.Unlock()
		if rec {
			break
		}
		reserveEvery(t, f, lim, 1, gap)
	}
	mu.Lock()
	rec := o.recovered
	mu.Unlock()
	if rec {
		from := f.Stats().PrimaryGrants
		reserveEvery(t, f, lim, after, gap)
		o.grantsAfterRec = f.Stats().PrimaryGrants - from
	}
	o.st = f.Stats()
	return o
}

// check fails t unless the outage run o fell back during the cut,
// recovered within two probes begun after the restore, and was then
// granted every reservation by Redis.
func (o outage) check(t *testing.T, after int) {
	t.Helper()
	switch {
	case o.downBeforeCut:
		t.Fatalf("stats %+v: on the fallback before the cut", o.st)
	case o.atRestore.Switches == 0 || o.atRestore.FallbackGrants == 0:
		t.Fatalf("at the restore %+v: want a switch to the fallback during the cut", o.atRestore)
	case !o.recovered:
		t.Fatalf("stats %+v: no switch back to Redis after the restore", o.st)
	case o.atRecovery.Probes-o.atRestore.Probes > 2:
		t.Fatalf("%d probes begun after the restore before the switch back (at the restore %+v, at the switch %+v); want at most 2",
			o.atRecovery.Probes-o.atRestore.Probes, o.atRestore, o.atRecovery)
	case o.grantsAfterRec != int64(after):
		t.Fatalf("after the switch back Redis granted %d of %d reservations (stats %+v)", o.grantsAfterRec, after, o.st)
	}
}

// TestFailoverRecoversAfterCut cuts a Redis 100 ms away for half a second
// (probes every 100 ms; the other settings the library's) and checks that
// the Failover falls back during the cut, is back on Redis within two
// probes begun after the restore, and is then served by Redis. A probe
// made by a reservation would have to dial within one timeout, which at
// this RTT it cannot: it would never switch back.
// TestLongFailoverOutage does it at the library's defaults for 10 s.
func TestFailoverRecoversAfterCut(t *testing.T) {
	f := &Failover{ProbeEvery: 100 * time.Millisecond}
	const after = 10
	p := distantFailover(t, 100*time.Millisecond, f)
	o := cutAndRestore(t, p, f, 10, 25, 200, after, 20*time.Millisecond)
	o.check(t, after)
}
