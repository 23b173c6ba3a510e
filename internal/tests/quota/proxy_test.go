package quota_test

import (
	"testing"
	"time"

	"github.com/simbench/simbench/internal/netns"
)

// startProxy returns a delaying proxy on loopback to upstream at rtt,
// closed when tb ends.
func startProxy(tb testing.TB, upstream string, rtt time.Duration) *netns.Proxy {
	tb.Helper()
	p, err := netns.StartProxy("127.0.0.1:0", upstream, rtt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(p.Close)
	return p
}
