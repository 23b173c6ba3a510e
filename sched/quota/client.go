package quota

import (
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// NewClient returns a go-redis client for a Redis backend: opt, copied,
// with ContextTimeoutEnabled set, so that a round trip ends at its
// context's deadline (Failover's Timeout, 250 ms by default) instead of at
// go-redis's ReadTimeout (3 s, and 5 s of dialling before it) when the
// server is hung; MaxRetries, when 0, set to -1 (no retries: Failover
// retries by probing, and a retry would only spend the deadline); and
// DialTimeout, when 0, set to DefaultDialTimeout (1 s). Under a Failover
// the wait for a connection ends at the deadline of the Failover's own
// budget (Failover.DialTimeout, which follows its Timeout); a dial still
// under way then goes on in the background and leaves its connection in
// the pool. opt is not modified.
func NewClient(opt *redis.Options) *redis.Client {
	o := *opt
	o.ContextTimeoutEnabled = true
	if o.MaxRetries == 0 {
		o.MaxRetries = -1
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	return redis.NewClient(&o)
}

// ParseURL reads a redis:// or rediss:// URL (redis://[user:password@]host:port[/db])
// into options for NewClient; any other scheme, http:// for one, is an error
// saying what to write.
func ParseURL(url string) (*redis.Options, error) {
	if !strings.HasPrefix(url, "redis://") && !strings.HasPrefix(url, "rediss://") && !strings.HasPrefix(url, "unix://") {
		return nil, fmt.Errorf("quota: Redis URL %q: want redis://host:port (or rediss:// for TLS, unix:///path)", url)
	}
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("quota: Redis URL %q: %w", url, err)
	}
	return o, nil
}

// honoursDeadlines reports whether client c ends a round trip at its
// context's deadline, for the clients whose options say so (*redis.Client,
// *redis.ClusterClient, *redis.Ring); a client of another type is taken
// on trust.
func honoursDeadlines(c redis.Scripter) bool {
	switch c := c.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return true
}

// errIgnoresDeadlines is the panic of a Redis backend whose client would
// ignore context deadlines.
const errIgnoresDeadlines = "quota: the Redis backend's go-redis client ignores context deadlines " +
	"(Options.ContextTimeoutEnabled is false), so a hung server would hold every round trip for seconds " +
	"instead of Failover's timeout: build the client with quota.NewClient, or set ContextTimeoutEnabled"
