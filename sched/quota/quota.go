// Package quota shares a request or token bucket among many processes that
// use one API key: a rate limit belongs to the key, not to a process.
//
// A Backend holds buckets with the semantics of sched's local buckets
// (GCRA: a theoretical arrival time that may run ahead of now, which is the
// bucket's debt). Reserve takes units, into debt if the caller accepts the
// wait; Settle charges or returns the difference between reserved and actual
// usage; Refund gives units back as far as that is safe. Memory is the
// in-process backend (no I/O); Redis shares the bucket through a redis-server,
// on a go-redis client built with NewClient so that a hung server cannot hold
// a round trip past its context's deadline.
// Lease keeps Redis off the hot path by reserving slices of the shared bucket
// and spending them locally; Failover bounds each round trip and falls back
// to a local bucket, or fails closed, when Redis is slow or gone. Failover
// opens Redis's connections (a Connector) on a budget of its own and
// probes in the background, and its defaults (DefaultTimeout 250 ms,
// DefaultDialTimeout 1 s, DefaultProbeEvery 1 s) are chosen for a Redis up
// to 100 ms of RTT away: measured through a delaying proxy on loopback,
// one reservation every 100 ms for 20 s, Redis granted 200 of 200 at 30 ms
// and at 100 ms of RTT, and after a 10 s cut the first probe begun after
// the restore switched back.
// Shared is the sched.Quota a Runner takes (sched.WithQuota): a fleet of
// Runners then admits calls against one set of buckets.
//
// The package is the module github.com/simbench/simbench/sched/quota: it
// requires sched and go-redis, and an importer of sched alone pays for
// neither.
//
// Times inside a bucket are microseconds since the Unix epoch, so that a
// Redis script (whose numbers are doubles) computes exactly what Memory does.
package quota

import (
	"context"
	"errors"
	"math"
	"time"
)

// Limit names one shared bucket and gives its size. Every process sharing
// the bucket must use the same Key, Service, Kind, PerMinute and Burst.
type Limit struct {
	Key       string  // API key or organisation the limit belongs to
	Service   string  // service (provider endpoint) within the key
	Kind      string  // what is counted: "rpm" (requests) or "tpm" (tokens)
	PerMinute float64 // units added per minute; must be > 0
	Burst     float64 // most units the bucket holds; must be > 0
}

// Name returns the bucket's storage key, simbench:{Key}:Service:Kind. The
// braces make every bucket of one API key share a Redis Cluster hash slot.
func (l Limit) Name() string { return "simbench:{" + l.Key + "}:" + l.Service + ":" + l.Kind }

// scaled returns the limit divided among n processes.
func (l Limit) scaled(n int) Limit {
	if n > 1 {
		l.PerMinute /= float64(n)
		l.Burst /= float64(n)
	}
	return l
}

func (l Limit) check() {
	if !(l.PerMinute > 0) || !(l.Burst > 0) {
		panic("quota: limit " + l.Name() + " needs PerMinute > 0 and Burst > 0")
	}
}

// Forever, as a maximum wait, reserves however deep into debt the bucket
// must go: the reservation is always granted.
const Forever time.Duration = math.MaxInt64

// Mark identifies a reservation for Settle and Refund. The zero Mark refunds
// nothing safely (the bucket's bound keeps every later reservation).
type Mark struct {
	spent float64 // the bucket's total span (µs) after the reservation
	local bool    // set by Failover: the reservation came from its local bucket
}

// Local reports whether Failover granted the reservation from its local
// fallback bucket (Redis was down) rather than from its primary backend.
func (m Mark) Local() bool { return m.local }

// Reservation is the answer to Reserve.
type Reservation struct {
	OK      bool          // the units are reserved
	Wait    time.Duration // from Now until the units are available (µs resolution); when !OK, the wait that exceeded the maximum
	Mark    Mark          // pass to Settle and Refund
	Now     time.Time     // the backend's clock at the reservation (Redis: the server's time)
	Holders int           // processes registered on the bucket (Redis with Holder set; otherwise 0)
}

// Backend is a store of shared buckets. Implementations are safe for
// concurrent use.
type Backend interface {
	// Reserve takes n units (requests or tokens) for the earliest time they
	// are available, if that is at most maxWait from now; otherwise it
	// changes nothing and returns OK false with the wait it would need.
	Reserve(ctx context.Context, lim Limit, n float64, maxWait time.Duration) (Reservation, error)
	// Settle accounts for a reservation of reserved units that used actual:
	// the excess is taken now (into debt), a shortfall refunded with m.
	Settle(ctx context.Context, lim Limit, reserved, actual float64, m Mark) error
	// Refund gives back n units of the reservation m, as far as no later
	// reservation is undercut (see Memory.Refund); the rest is forfeited.
	Refund(ctx context.Context, lim Limit, n float64, m Mark) error
	// Available returns the units the bucket holds now (negative: in debt).
	Available(ctx context.Context, lim Limit) (float64, error)
}

// ErrUnavailable is returned (wrapped) by Failover under FailClosed while the
// primary backend is unreachable.
var ErrUnavailable = errors.New("quota: shared backend unavailable")

func micros(t time.Time) float64 { return float64(t.UnixMicro()) }

func fromMicros(us float64) time.Time { return time.UnixMicro(int64(us)) }

func waitMicros(d time.Duration) float64 {
	if d == Forever {
		return -1
	}
	return float64(max(d, 0) / time.Microsecond)
}
