package quota_test

import (
	"context"
	. "github.com/simbench/simbench/sched/quota"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/simbench/simbench/sched"
)

// BenchmarkReserve measures reservations against the package's loopback
// redis-server: one round trip each (direct), through a Lease spending
// slices locally at full speed (lease), and through a Lease at 1,000 calls/s
// of virtual time with a 1 s slice (lease-1000/s). It reports Redis round
// trips per 1,000 reservations, reservations per second and the p99 time
// per reservation.
func BenchmarkReserve(b *testing.B) {
	lim := Limit{Key: "bench", Service: "s", Kind: "rpm", PerMinute: 1e12, Burst: 1e9}
	run := func(b *testing.B, r *Redis, take func() error) {
		lat := make([]time.Duration, 0, b.N)
		start := time.Now()
		b.ResetTimer()
		for b.Loop() {
			t0 := time.Now()
			if err := take(); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
		b.ReportMetric(float64(len(lat))/time.Since(start).Seconds(), "res/s")
		slices.Sort(lat)
		b.ReportMetric(float64(r.RoundTrips())*1000/float64(len(lat)), "roundtrips/1000res")
		b.ReportMetric(float64(lat[int(math.Ceil(0.99*float64(len(lat))))-1].Nanoseconds()), "p99-ns/res")
	}
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		r := NewRedis(testClient(b))
		run(b, r, func() error {
			_, err := r.Reserve(ctx, lim, 1, 0)
			return err
		})
	})
	b.Run("lease", func(b *testing.B) {
		r := NewRedis(testClient(b))
		l := &Lease{Backend: r, Limit: lim, TTL: time.Second, Max: 1000}
		run(b, r, func() error {
			_, _, err := l.Take(ctx, 1, 0)
			return err
		})
	})
	b.Run("lease-1000/s", func(b *testing.B) {
		r := NewRedis(testClient(b))
		clock := time.Unix(1_800_000_000, 0)
		l := &Lease{Backend: r, Limit: lim, TTL: time.Second, Max: 1000, Now: func() time.Time { return clock }}
		run(b, r, func() error {
			clock = clock.Add(time.Millisecond)
			_, _, err := l.Take(ctx, 1, 0)
			return err
		})
	})
}

// BenchmarkRunnerQuota measures what a shared quota adds to each call of a
// sched.Runner at 1,000 calls/s (one call every millisecond, each its own
// turn, an executor that answers at once), against the package's loopback
// redis-server: without a quota (local), with grants of one unit (direct:
// a Redis round trip per call) and with leased grants sized to the rate
// (lease). Each iteration runs 1,000 calls per variant. It reports each
// variant's p99 call latency, the p99 the lease adds to local, Redis round
// trips per call, and how many times fewer round trips leases make.
func BenchmarkRunnerQuota(b *testing.B) {
	const calls = 1000
	cfg := sched.Config{Services: map[string]sched.ServiceConfig{"api": {RequestsPerMinute: 6e6, RequestBurst: 1e5}}}
	exec := func(context.Context, *sched.Call, int) sched.Outcome { return sched.Succeeded(nil) }
	// run sends calls at 1,000/s and returns their latencies.
	run := func(b *testing.B, opts ...sched.RunnerOption) []time.Duration {
		r, err := sched.NewRunner(cfg, exec, opts...)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		lat := make([]time.Duration, 0, calls)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for i := range calls {
			<-tick.C
			t0 := time.Now()
			if _, err := r.Run(context.Background(), sched.Turn{Calls: []sched.Call{{ID: strconv.Itoa(i), Service: "api"}}}); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		return lat
	}
	p99 := func(lat []time.Duration) float64 {
		slices.Sort(lat)
		return float64(lat[int(math.Ceil(0.99*float64(len(lat))))-1].Microseconds())
	}
	var local, direct, lease []time.Duration
	var directTrips, leaseTrips int64
	for b.Loop() {
		local = append(local, run(b)...)
		r := NewRedis(testClient(b))
		q := NewShared(r, "bench", cfg)
		q.Max = 1 / 1e5 // one unit per grant
		direct = append(direct, run(b, sched.WithQuota(q))...)
		directTrips += r.RoundTrips()
		r = NewRedis(testClient(b))
		lease = append(lease, run(b, sched.WithQuota(NewShared(r, "bench", cfg)))...)
		leaseTrips += r.RoundTrips()
	}
	n := float64(len(local))
	b.ReportMetric(p99(local), "local-p99-us")
	b.ReportMetric(p99(direct), "direct-p99-us")
	b.ReportMetric(p99(lease), "lease-p99-us")
	b.ReportMetric(p99(lease)-p99(local), "added-p99-us")
	b.ReportMetric(float64(directTrips)/n, "direct-roundtrips/call")
	b.ReportMetric(float64(leaseTrips)/n, "lease-roundtrips/call")
	b.ReportMetric(float64(directTrips)/max(float64(leaseTrips), 1), "roundtrip-cut-x")
}
