package quota

import (
	"cmp"
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

// DefaultTimeout bounds each round trip to the primary backend. It is
// chosen for a Redis up to 100 ms of round-trip time away (another
// availability zone is 1–2 ms, another region 30–100 ms): a script's round
// trip then has 2.5 times its RTT. A hung Redis costs one reservation this
// long before the switch to the fallback; the reservations after it do not
// wait.
const DefaultTimeout = 250 * time.Millisecond

// DefaultProbeEvery is how often, while down, Failover tries the primary again.
const DefaultProbeEvery = time.Second

// DialFactor is how many times Failover.Timeout a Connector's connections
// get to open (dial, handshake and script load: 3 or 4 round trips), when
// Failover.DialTimeout is 0.
const DialFactor = 4

// DefaultDialTimeout bounds the opening of a Connector's connections at the
// default timeout: DialFactor × DefaultTimeout.
const DefaultDialTimeout = DialFactor * DefaultTimeout

// Connector is a Backend whose connections Failover opens off the path of
// any reservation, on a budget of their own (Failover.DialTimeout): Redis
// is one. A round trip on a connection that is not open yet would spend a
// reservation's timeout on the dial and the handshake, which at tens of
// milliseconds of RTT do not fit in it.
type Connector interface {
	// Connect makes the backend's connections ready (dialled, handshaken,
	// its scripts loaded) within ctx's deadline, and reports whether the
	// backend answered on them.
	Connect(ctx context.Context) error
}

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
	Probes         int64 // tries of the primary while down (in-line round trips, or background connects)
	Connects       int64 // a Connector's connections opened (at first use, then at each probe that reached the server)
}

// Failover is a Backend that sends every operation to Primary with a
// timeout per round trip and, when a round trip fails, switches to Policy
// until a probe (at most every ProbeEvery) succeeds.
//
// When Primary is a Connector (Redis is) and Timeout is not negative, its
// connections are opened on a budget of their own, DialTimeout: at first
// use (the first operations wait for it; a failure switches to the
// fallback), and while down by each probe, which runs in the background
// (the operations meanwhile are served by the fallback without waiting):
// a Connect, then a peek at the bucket within Timeout on the open
// connections, switching back when both succeed. go-redis
// closes a connection whose command hit its deadline, so a probe made by
// a reservation would dial again within one timeout; at 30 ms of RTT the
// dial, handshake and script load do not fit in 50 ms, and Redis would
// never be used again. Otherwise (a simulated store on a virtual clock)
// a probe is a real operation sent to the primary.
// Every Reserve gets exactly one answer from exactly one bucket:
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
	// Primary is the shared store used while it answers (Redis, say);
	// Policy what to do while it does not (FallbackLocal, FailClosed).
	Primary   Backend
	Policy    Policy
	Processes int // N for FallbackLocal; 0 learns it from Reservation.Holders
	// Timeout bounds each round trip to Primary (DefaultTimeout if 0).
	// Negative sets no deadline: Primary bounds its own round trips (a
	// simulated store on a virtual clock, which must not arm real timers).
	Timeout    time.Duration
	ProbeEvery time.Duration // DefaultProbeEvery if 0
	// DialTimeout bounds a Connector's Connect (DialFactor × Timeout if 0).
	// Now is the clock of the local fallback and of probes (time.Now if nil).
	DialTimeout time.Duration
	OnSwitch    func(Event) // called (synchronously, without locks held) on each switch; may be nil
	Now         func() time.Time

	mu        sync.Mutex
	local     *Memory
	down      bool
	epoch     int // counts switches: a round trip's answer only switches within the epoch it began in
	lastProbe time.Time
	holders   int
	stats     Stats
	ready     chan struct{}  // closed when the first use's Connect is done (nil before it begins)
	probing   bool           // a background Connect is in flight
	closed    bool           // Close was called: no more background work
	bg        sync.WaitGroup // background Connects
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

// Close waits for the background Connects in flight (each bounded by
// DialTimeout plus Timeout) and starts no more (a Failover closed before
// its first use never connects); the Failover still answers
// every operation afterwards. Close does not close Primary's client.
func (f *Failover) Close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.bg.Wait()
}

// connector returns Primary as a Connector whose connections Failover
// opens in the background, or nil (Primary is no Connector, or Timeout is
// negative: a virtual clock, on which nothing may run in the background).
func (f *Failover) connector() Connector {
	if c, ok := f.Primary.(Connector); ok && f.Timeout >= 0 {
		return c
	}
	return nil
}

// timeouts returns the round trip's timeout and the connections' budget.
func (f *Failover) timeouts() (timeout, dial time.Duration) {
	timeout = cmp.Or(f.Timeout, DefaultTimeout)
	return timeout, cmp.Or(f.DialTimeout, DialFactor*timeout)
}

// connect starts, with f.mu held, a background Connect of c on the dial
// budget: a probe when probe is set (Primary's connections did not answer
// in epoch), which then peeks at lim's bucket within the round trip's
// timeout and switches back to the primary when both succeed; otherwise
// the first use's, which closes f.ready when done and switches to the
// fallback when it fails.
func (f *Failover) connect(c Connector, probe bool, lim Limit) {
	f.probing = true
	epoch := f.epoch
	if probe {
		f.stats.Probes++
	}
	ready := f.ready
	f.bg.Add(1)
	go func() {
		defer f.bg.Done()
		timeout, dial := f.timeouts()
		ctx, cancel := context.WithTimeout(context.Background(), dial)
		err := c.Connect(ctx)
		cancel()
		if err == nil {
			f.mu.Lock()
			f.stats.Connects++
			f.mu.Unlock()
			if probe {
				ctx, cancel = context.WithTimeout(context.Background(), timeout)
				_, err = f.Primary.Available(ctx, lim)
				cancel()
			}
		}
		f.mu.Lock()
		f.probing = false
		f.mu.Unlock()
		if probe || err != nil {
			f.result(err, epoch)
		}
		if !probe {
			close(ready)
		}
	}()
}

func (f *Failover) divisor() int {
	if f.Processes > 0 {
		return f.Processes
	}
	return max(f.holders, 1)
}

// usePrimary says whether this operation, on lim, should try the
// primary, and the epoch the round trip begins in (pass it to result). The
// first operations on a Connector wait for its first Connect (at most
// DialTimeout).
func (f *Failover) usePrimary(lim Limit) (bool, int) {
	f.mu.Lock()
	f.init()
	c := f.connector()
	if c != nil && f.ready == nil && !f.closed {
		f.ready = make(chan struct{})
		f.connect(c, false, lim)
	}
	ready := f.ready
	f.mu.Unlock()
	if ready != nil {
		<-ready
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.down {
		return true, f.epoch
	}
	every := f.ProbeEvery
	if every <= 0 {
		every = DefaultProbeEvery
	}
	if now := f.Now(); now.Sub(f.lastProbe) >= every && !f.probing {
		f.lastProbe = now
		if c != nil {
			if !f.closed {
				f.connect(c, true, lim)
			}
			return false, f.epoch
		}
		f.stats.Probes++
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
	if f.Timeout < 0 {
		return ctx, func() {}
	}
	t, _ := f.timeouts()
	return context.WithTimeout(ctx, t)
}

// Reserve implements Backend.
func (f *Failover) Reserve(ctx context.Context, l Limit, n float64, maxWait time.Duration) (Reservation, error) {
	if use, epoch := f.usePrimary(l); use {
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
	if use, epoch := f.usePrimary(l); use {
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
