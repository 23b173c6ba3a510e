package quota_test

import (
	"context"
	"fmt"
	. "github.com/simbench/simbench/sched/quota"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/simbench/simbench/sched"
)

// A fleet of processes shares one API key's request limit through Redis:
// each process wraps the server in a Failover (a bounded round trip, a local
// bucket at limit ÷ N when Redis is gone) and spends leased slices locally.
func ExampleLease() {
	rdb := NewClient(&redis.Options{Addr: shared.addr()})
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

// A replica of a fleet shares its services' limits with every other
// replica through one Redis: the two lines after cfg are all it takes.
func ExampleNewShared() {
	rdb := NewClient(&redis.Options{Addr: shared.addr()})
	defer rdb.Close()
	rdb.FlushAll(context.Background()) // (this example's server starts empty)
	hostname := "replica-1"
	cfg := sched.Config{MaxInFlight: 4, Services: map[string]sched.ServiceConfig{"search": {RequestsPerMinute: 300, RequestBurst: 5}}}
	exec := func(_ context.Context, c *sched.Call, _ int) sched.Outcome { return sched.Succeeded(c.ID) }

	q := NewShared(&Failover{Primary: &Redis{Client: rdb, Holder: hostname}}, "org-42", cfg)
	r, err := sched.NewRunner(cfg, exec, sched.WithQuota(q))
	if err != nil {
		panic(err)
	}
	defer r.Close()

	var turn sched.Turn
	for i := range 8 {
		turn.Calls = append(turn.Calls, sched.Call{ID: fmt.Sprint("call-", i), Service: "search"})
	}
	results, _ := r.Run(context.Background(), turn)
	ok := 0
	for _, res := range results {
		if res.Class == sched.ClassSuccess {
			ok++
		}
	}
	fmt.Println(ok, "of", len(results), "calls succeeded within the shared limit")
	// Output: 8 of 8 calls succeeded within the shared limit
}

// A go-redis client for a Redis backend: NewClient sets
// ContextTimeoutEnabled, so that each round trip ends at Failover's
// timeout even when the server hangs.
func ExampleNewClient() {
	opt, err := ParseURL("redis://" + shared.addr())
	if err != nil {
		panic(err)
	}
	rdb := NewClient(opt)
	defer rdb.Close()
	f := &Failover{Primary: NewRedis(rdb)} // 50 ms per round trip (DefaultTimeout)
	lim := Limit{Key: "org-7", Service: "search", Kind: "rpm", PerMinute: 600, Burst: 10}
	r, err := f.Reserve(context.Background(), lim, 1, 0)
	fmt.Println(rdb.Options().ContextTimeoutEnabled, r.OK, r.Mark.Local(), err)
	// Output: true true false <nil>
}

// A driver with a clock of its own (a simulator on virtual time) drives a
// Shared quota in Acquire's two steps: ReserveAt answers at once with the
// wait before the units are available, and GrantAt hands the grant out when
// the driver's clock has passed it. The Core is configured as a Runner given
// sched.WithQuota would be (sched.CreditConfig).
func ExampleShared_ReserveAt() {
	clock := time.UnixMicro(0)
	mem := NewMemory(func() time.Time { return clock })
	cfg := sched.Config{Services: map[string]sched.ServiceConfig{"api": {RequestsPerMinute: 60, RequestBurst: 1}}}
	q := NewShared(mem, "org-42", cfg)
	fmt.Println(sched.CreditConfig(cfg, q).Services["api"].CreditRequests)

	for range 2 {
		p, err := q.ReserveAt(context.Background(), clock, "api", sched.CreditRequests, 1)
		if err != nil {
			fmt.Println(err)
			return
		}
		clock = clock.Add(p.Wait) // the driver waits on its own clock
		g := q.GrantAt(p, clock)
		fmt.Printf("%v units after waiting %v\n", g.Units, p.Wait)
	}
	// Output:
	// true
	// 1 units after waiting 0s
	// 1 units after waiting 1s
}
