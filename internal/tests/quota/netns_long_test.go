//go:build long

package quota_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/simbench/simbench/internal/netns"
	"github.com/simbench/simbench/internal/redisproc"
	. "github.com/simbench/simbench/sched/quota"
)

// linkCut cuts the way to Redis by setting the link to its host down.
type linkCut struct {
	tb testing.TB
	l  *netns.Link
}

// Cut sets the link down.
func (c linkCut) Cut() {
	if err := c.l.Down(); err != nil {
		c.tb.Fatal(err)
	}
}

// Restore sets the link up again.
func (c linkCut) Restore() {
	if err := c.l.Up(); err != nil {
		c.tb.Fatal(err)
	}
}

// pause hangs Redis by stopping its process (SIGSTOP): its connections
// stay open and unanswered, until Restore continues it (SIGCONT).
type pause struct {
	tb testing.TB
	p  *os.Process
}

// Cut stops the process.
func (c pause) Cut() {
	if err := c.p.Signal(syscall.SIGSTOP); err != nil {
		c.tb.Fatal(err)
	}
}

// Restore continues the process.
func (c pause) Restore() {
	if err := c.p.Signal(syscall.SIGCONT); err != nil {
		c.tb.Fatal(err)
	}
}

// hostFailover puts redis-server on a host of its own (a network
// namespace, on its own address) and the client on another, joined by a
// veth link, and sets f.Primary to a Redis backend there, built as a
// library user builds one (quota.NewClient on options giving the address;
// the client's connections are dialled from the client's host). The
// client reaches Redis through a delaying proxy on its own host at rtt.
// It returns the link, whose Cut sets it down, and the server's process,
// whose Cut stops it; everything is removed when tb ends. It skips tb
// without root, ip or redis-server.
func hostFailover(tb testing.TB, rtt time.Duration, f *Failover) (linkCut, pause) {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Skip(redisproc.ErrMissing)
	}
	n := netns.ForTest(tb)
	rh, err := n.Add("redis")
	if err != nil {
		tb.Fatal(err)
	}
	ch, err := n.Add("client")
	if err != nil {
		tb.Fatal(err)
	}
	l, err := n.Link(rh, ch)
	if err != nil {
		tb.Fatal(err)
	}
	srv := rh.Command(bin, "--port", "6379", "--bind", l.AddrA, "--protected-mode", "no", "--save", "", "--appendonly", "no")
	if err := srv.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	upstream := l.AddrA + ":6379"
	waitRedis(tb, ch, upstream)
	ln, err := ch.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := netns.Serve(ln, ch.Dial, upstream, rtt)
	tb.Cleanup(p.Close)
	c := NewClient(&redis.Options{Addr: p.Addr(), Dialer: ch.Dial})
	f.Primary = &Redis{Client: c, Holder: "p1"}
	tb.Cleanup(func() { f.Close(); c.Close() })
	return linkCut{tb, l}, pause{tb, srv.Process}
}

// waitRedis waits until the Redis at addr answers PING from host h (at
// most 5 s).
func waitRedis(tb testing.TB, h *netns.NS, addr string) {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Dialer: h.Dial, MaxRetries: -1, DialTimeout: 200 * time.Millisecond, ContextTimeoutEnabled: true})
	defer c.Close()
	var err error
	for range 200 {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err = c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	tb.Fatalf("redis-server at %s never answered: %v", addr, err)
}

// TestLongHostsFailoverDistantRedis is TestLongFailoverDistantRedis with
// Redis and the client on separate network hosts: one reservation every
// 100 ms for 20 s through a Redis 30 ms and 100 ms of RTT away, at the
// library's defaults; Redis grants at least 95% of them.
func TestLongHostsFailoverDistantRedis(t *testing.T) {
	for _, rtt := range distances {
		t.Run(fmt.Sprint(rtt), func(t *testing.T) {
			t.Parallel()
			f := &Failover{}
			hostFailover(t, rtt, f)
			wantRedisGrants(t, f, "distant", fmt.Sprintf("RTT %v across hosts", rtt))
		})
	}
}

// TestLongHostsFailoverOutage is TestLongFailoverOutage with Redis and the
// client on separate network hosts, the link between them set down
// (ip link set down) for 10 s: reserving every 100 ms at the library's
// defaults, the Failover falls back during the cut, is back on Redis
// within two probes (two probe intervals) begun after the link comes up,
// and is then served by Redis. Unlike the proxy's cut, which closes its
// connections, a link set down loses packets and leaves them open; and
// the first probe, begun milliseconds after ip link set up returns, was
// seen to time out on its dial budget (measured: the second switched back
// at both distances, 1.17 s after the link came up at 30 ms).
func TestLongHostsFailoverOutage(t *testing.T) {
	for _, rtt := range distances {
		t.Run(fmt.Sprint(rtt), func(t *testing.T) {
			t.Parallel()
			f := &Failover{}
			link, _ := hostFailover(t, rtt, f)
			const after = 20
			o := cutAndRestore(t, link, f, 30, 100, 100, after, 100*time.Millisecond)
			t.Logf("RTT %v across hosts: %d probes during the cut, %d after the link came up until the switch back; stats %+v",
				rtt, o.atRestore.Probes, o.atRecovery.Probes-o.atRestore.Probes, o.st)
			o.check(t, after)
		})
	}
}

// TestLongHostsFailoverHung is TestLongHostsFailoverOutage with Redis hung
// (SIGSTOP) for 10 s instead of cut off: its host still answers TCP, its
// connections stay open, and nothing comes back on them.
func TestLongHostsFailoverHung(t *testing.T) {
	for _, rtt := range distances {
		t.Run(fmt.Sprint(rtt), func(t *testing.T) {
			t.Parallel()
			f := &Failover{}
			_, hung := hostFailover(t, rtt, f)
			const after = 20
			o := cutAndRestore(t, hung, f, 30, 100, 100, after, 100*time.Millisecond)
			t.Logf("RTT %v across hosts: %d probes during the hang, %d after it ended until the switch back; stats %+v",
				rtt, o.atRestore.Probes, o.atRecovery.Probes-o.atRestore.Probes, o.st)
			o.check(t, after)
		})
	}
}
