package quota

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// A fleet of processes shares one API key's request limit through Redis:
// each process wraps the server in a Failover (a bounded round trip, a local
// bucket at limit ÷ N when Redis is gone) and spends leased slices locally.
func ExampleLease() {
	rdb := redis.NewClient(&redis.Options{Addr: shared.addr()})
	defer rdb.Close()
	rdb.FlushAll(context.Background()) // (this example's server starts empty)
	r := &Redis{Client: rdb, Holder: "worker-1"}
	backend := &Failover{Primary: r, Policy: FallbackLocal, Timeout: 50 * time.Millisecond}
	lim := Limit{Key: "org-42", Service: "openai", Kind: "rpm", PerMinute: 600, Burst: 100}
	lease := &Lease{Backend: backend, Limit: lim, TTL: time.Second, Min: 50}
	defer lease.Close(context.Background())

	granted := 0
	for range 40 {
		if ok, _, err := lease.Take(context.Background(), 1, 0); err == nil && ok {
			granted++
		}
	}
	fmt.Println(lim.Name(), "granted", granted, "in", r.RoundTrips(), "round trip")
	// Output: simbench:{org-42}:openai:rpm granted 40 in 1 round trip
}
