package quota

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Policy says what Failover does while its primary backend is unreachable.
type Policy int

const (
	// FallbackLocal serves reservations from a local bucket holding the
	// limit ÷ N, N being Failover.Processes or, when that is 0, the most
	// holders the primary reported (at least 1). The fleet then stays near
	// the limit without coordination, at the cost of idle processes' share.
	FallbackLocal Policy = iota
	// FailClosed refuses reservations with an error wrapping ErrUnavailable:
	// no call goes out that the shared limit has not granted.
	FailClosed
)

// DefaultTimeout bounds each round trip to the primary backend.
const DefaultTimeout = 50 * time.Millisecond

// DefaultProbeEvery is how often, while down, Failover tries the primary again.
const DefaultProbeEvery = time.Second

// Event reports a switch between the primary backend and the fallback.
type Event struct {
	Down    bool      // true: switched to the fallback; false: recovered
	At      time.Time // local time of the switch
	Err     error     // the primary's error that caused the switch (Down only)
	Divisor int       // the N the fallback bucket divides the limit by
}

// Stats counts what Failover did.
type Stats struct {
	Switches       int64 // switches to the fallback
	Recoveries     int64 // switches back to the primary
	PrimaryErrors  int64 // round trips to the primary that failed or timed out
	PrimaryGrants  int64 // reservations granted by the primary
	FallbackGrants int64 // reservations granted by the local fallback bucket
	Refused        int64 // reservations refused with ErrUnavailable (FailClosed)
	Forfeited      int64 // refunds to the primary lost while it was down
}

// Failover is a Backend that sends every operation to Primary with a
// timeout per round trip and, when a round trip fails, switches to Policy
// until a probe (at most every ProbeEvery, made by a real operation)
// succeeds. Every Reserve gets exactly one answer from exactly one bucket:
// a reservation is never granted by both. A reservation whose round trip
// timed out may still have been applied by the server; those units are
// forfeited, which errs on the side of the limit. Settle and Refund go to
// the bucket that granted the reservation (while down, without trying the
// primary); a refund the primary cannot take
// is forfeited (counted), an excess it cannot take is charged locally.
// A redis-server restarted without persistence comes back with full
// buckets: the fleet may spend one extra burst after a recovery.
// Set the fields before first use; safe for concurrent use afterwards.
type Failover struct {
	Primary   Backend
	Policy    Policy
	Processes int // N for FallbackLocal; 0 learns it from Reservation.Holders
	// Timeout bounds each round trip to Primary (DefaultTimeout if 0).
	// Negative sets no deadline: Primary bounds its own round trips (a
	// simulated store on a virtual clock, which must not arm real timers).
	Timeout    time.Duration
	ProbeEvery time.Duration // DefaultProbeEvery if 0
	OnSwitch   func(Event)   // called (synchronously, without locks held) on each switch; may be nil
	Now        func() time.Time

	mu        sync.Mutex
	local     *Memory
	down      bool
	epoch     int // counts switches: a round trip's answer only switches within the epoch it began in
	lastProbe time.Time
	holders   int
	stats     Stats
}

func (f *Failover) init() {
	if f.local == nil {
		if f.Now == nil {
			f.Now = time.Now
		}
		f.local = NewMemory(f.Now)
	}
}

// Stats returns a copy of the counters.
func (f *Failover) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// Down reports whether Failover is serving from its fallback.
func (f *Failover) Down() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.down
}

func (f *Failover) divisor() int {
	if f.Processes > 0 {
		return f.Processes
	}
	return max(f.holders, 1)
}

// usePrimary says whether this operation should try the primary, and the
// epoch the round trip begins in (pass it to result).
func (f *Failover) usePrimary() (bool, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	if !f.down {
		return true, f.epoch
	}
	every := f.ProbeEvery
	if every <= 0 {
		every = DefaultProbeEvery
	}
	if now := f.Now(); now.Sub(f.lastProbe) >= every {
		f.lastProbe = now
		return true, f.epoch
	}
	return false, f.epoch
}

// epochNow returns the current epoch, for round trips begun outside
// usePrimary.
func (f *Failover) epochNow() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.epoch
}

// result records the outcome of a round trip to the primary, begun in
// epoch, and fires the switch event, if any. Only an answer to a round
// trip begun in the current epoch switches: a success sent before the
// primary went down and answered after it was marked down is not a
// recovery (only a probe, sent while down, is), and a failure sent before
// a recovery does not undo it.
func (f *Failover) result(err error, epoch int) {
	f.mu.Lock()
	var ev *Event
	if err != nil {
		f.stats.PrimaryErrors++
		if !f.down && epoch == f.epoch {
			f.down, f.lastProbe = true, f.Now()
			f.epoch++
			f.stats.Switches++
			ev = &Event{Down: true, At: f.lastProbe, Err: err, Divisor: f.divisor()}
		}
	} else if f.down && epoch == f.epoch {
		f.down = false
		f.epoch++
		f.stats.Recoveries++
		ev = &Event{At: f.Now(), Divisor: f.divisor()}
	}
	f.mu.Unlock()
	if ev != nil && f.OnSwitch != nil {
		f.OnSwitch(*ev)
	}
}

func (f *Failover) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	t := f.Timeout
	switch {
	case t < 0:
		return ctx, func() {}
	case t == 0:
		t = DefaultTimeout
	}
	return context.WithTimeout(ctx, t)
}

// Reserve implements Backend.
func (f *Failover) Reserve(ctx context.Context, l Limit, n float64, maxWait time.Duration) (Reservation, error) {
	if use, epoch := f.usePrimary(); use {
		c, cancel := f.ctx(ctx)
		r, err := f.Primary.Reserve(c, l, n, maxWait)
		cancel()
		if err == nil {
			f.result(nil, epoch)
			f.mu.Lock()
			f.holders = max(f.holders, r.Holders)
			if r.OK {
				f.stats.PrimaryGrants++
			}
			f.mu.Unlock()
			return r, nil
		}
		if ctx.Err() != nil {
			return Reservation{}, ctx.Err()
		}
		f.result(err, epoch)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Policy == FailClosed {
		f.stats.Refused++
		return Reservation{}, fmt.Errorf("%w: %s", ErrUnavailable, l.Name())
	}
	r, _ := f.local.Reserve(ctx, l.scaled(f.divisor()), n, maxWait)
	r.Mark.local = true
	if r.OK {
		f.stats.FallbackGrants++
	}
	return r, nil
}

// Settle implements Backend.
func (f *Failover) Settle(ctx context.Context, l Limit, reserved, actual float64, m Mark) error {
	if !m.local {
		if !f.Down() {
			epoch := f.epochNow()
			c, cancel := f.ctx(ctx)
			err := f.Primary.Settle(c, l, reserved, actual, m)
			cancel()
			if err == nil {
				return nil
			}
			f.result(err, epoch)
		}
		// The primary is down or failed: charge an excess locally, forfeit
		// a refund.
		f.mu.Lock()
		defer f.mu.Unlock()
		if actual > reserved {
			return f.local.Settle(ctx, l.scaled(f.divisor()), 0, actual-reserved, Mark{})
		}
		f.stats.Forfeited++
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.local.Settle(ctx, l.scaled(f.divisor()), reserved, actual, m)
}

// Refund implements Backend.
func (f *Failover) Refund(ctx context.Context, l Limit, n float64, m Mark) error {
	if !m.local {
		err := ErrUnavailable
		if !f.Down() {
			epoch := f.epochNow()
			c, cancel := f.ctx(ctx)
			err = f.Primary.Refund(c, l, n, m)
			cancel()
			if err != nil {
				f.result(err, epoch)
			}
		}
		if err != nil {
			f.mu.Lock()
			f.stats.Forfeited++
			f.mu.Unlock()
		}
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.local.Refund(ctx, l.scaled(f.divisor()), n, m)
}

// Available implements Backend: the primary's figure, or while down the
// fallback bucket's.
func (f *Failover) Available(ctx context.Context, l Limit) (float64, error) {
	if use, epoch := f.usePrimary(); use {
		c, cancel := f.ctx(ctx)
		a, err := f.Primary.Available(c, l)
		cancel()
		f.result(err, epoch)
		if err == nil {
			return a, nil
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Policy == FailClosed {
		return 0, fmt.Errorf("%w: %s", ErrUnavailable, l.Name())
	}
	return f.local.Available(ctx, l.scaled(f.divisor()))
}
