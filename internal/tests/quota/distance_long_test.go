//go:build long

package quota_test

import (
	"fmt"
	"testing"
	"time"

	. "github.com/simbench/simbench/sched/quota"
)

// distances are the round-trip times the long distant-Redis tests put
// between the Failover and Redis: a Redis in another region, near and far.
var distances = []time.Duration{30 * time.Millisecond, 100 * time.Millisecond}

// TestLongFailoverDistantRedis makes one reservation every 100 ms for 20 s
// through a Redis 30 ms and 100 ms of RTT away, at the library's defaults,
// and checks that Redis grants at least 95% of them (it granted none
// before the connections were opened off the reservations' path).
func TestLongFailoverDistantRedis(t *testing.T) {
	for _, rtt := range distances {
		t.Run(fmt.Sprint(rtt), func(t *testing.T) {
			t.Parallel()
			f := &Failover{}
			distantFailover(t, rtt, f)
			wantRedisGrants(t, f, "distant-"+rtt.String(), fmt.Sprintf("RTT %v", rtt))
		})
	}
}

// wantRedisGrants makes 200 reservations on f under the limit named
// name, one every 100 ms, and requires Redis to grant at least 95% of
// them; where says where Redis is, for the log.
func wantRedisGrants(t *testing.T, f *Failover, name, where string) {
	t.Helper()
	const n = 200
	reserveEvery(t, f, distantLimit(name), n, 100*time.Millisecond)
	st := f.Stats()
	t.Logf("%s: %d of %d reservations granted by Redis, %d by the fallback (stats %+v)", where, st.PrimaryGrants, n, st.FallbackGrants, st)
	if st.PrimaryGrants*100 < n*95 {
		t.Fatalf("Redis granted %d of %d reservations, want at least 95%%", st.PrimaryGrants, n)
	}
}

// TestLongFailoverOutage cuts a Redis 30 ms and 100 ms of RTT away for
// 10 s, reserving every 100 ms at the library's defaults, and checks that
// the Failover falls back during the cut, is back on Redis within two
// probes (two probe intervals) begun after the restore, and is then
// served by Redis.
func TestLongFailoverOutage(t *testing.T) {
	for _, rtt := range distances {
		t.Run(fmt.Sprint(rtt), func(t *testing.T) {
			t.Parallel()
			f := &Failover{}
			const after = 20
			p := distantFailover(t, rtt, f)
			o := cutAndRestore(t, p, f, 30, 100, 100, after, 100*time.Millisecond)
			t.Logf("RTT %v: %d probes during the cut, %d after the restore until the switch back; stats %+v",
				rtt, o.atRestore.Probes, o.atRecovery.Probes-o.atRestore.Probes, o.st)
			o.check(t, after)
		})
	}
}
