package quota

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"
)

// BenchmarkReserve measures reservations against the package's loopback
// redis-server: one round trip each (direct), through a Lease spending
// slices locally at full speed (lease), and through a Lease at 1,000 calls/s
// of virtual time with a 1 s slice (lease-1000/s). It reports Redis round
// trips per 1,000 reservations and the p99 time per reservation.
func BenchmarkReserve(b *testing.B) {
	lim := Limit{Key: "bench", Service: "s", Kind: "rpm", PerMinute: 1e12, Burst: 1e9}
	run := func(b *testing.B, r *Redis, take func() error) {
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for b.Loop() {
			t0 := time.Now()
			if err := take(); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
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
