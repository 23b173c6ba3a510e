package sched

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/simbench/simbench/sched/internal/bucket"
)

// Limits are the limits of one service that can change while a Core runs
// (see Core.SetLimits). The fields mean what the ServiceConfig fields of the
// same names mean; zero is no limit.
type Limits struct {
	// MaxInFlight caps attempts in flight to the service; with an adaptive
	// limit it is the ceiling the limit stays under.
	MaxInFlight int
	// RequestsPerMinute and RequestBurst make the request bucket (burst 0:
	// one second's worth, at least 1).
	RequestsPerMinute, RequestBurst float64
	// TokensPerMinute and TokenBurst make the token bucket (burst 0: one
	// minute's worth).
	TokensPerMinute, TokenBurst float64
}

// MinRatePerMinute is the lowest refill rate New and SetLimits take, in
// units (requests or tokens) per minute: one a day. A lower rate books a
// call years ahead, or past the range of a time.Duration, never to start;
// a rate of 0 is no limit. A caller that derives rates (divides a limit
// among processes, scales it) checks the result against it: New refuses
// the rate rather than take it silently.
const MinRatePerMinute = 1.0 / (24 * 60)

// check reports the first limit that is negative, NaN or infinite, or a
// rate other than 0 below MinRatePerMinute.
func (l Limits) check() error {
	if l.MaxInFlight < 0 {
		return fmt.Errorf("MaxInFlight %d is negative", l.MaxInFlight)
	}
	for _, f := range []struct {
		name string
		v    float64
		rate bool
	}{
		{"RequestsPerMinute", l.RequestsPerMinute, true}, {"RequestBurst", l.RequestBurst, false},
		{"TokensPerMinute", l.TokensPerMinute, true}, {"TokenBurst", l.TokenBurst, false},
	} {
		switch {
		case f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0):
			return fmt.Errorf("%s %g is not a finite number at least 0", f.name, f.v)
		case f.rate && f.v > 0 && f.v < MinRatePerMinute:
			return fmt.Errorf("%s %g is below the floor of %g (one a day); 0 is no limit", f.name, f.v, MinRatePerMinute)
		}
	}
	return nil
}

// Stats is a Core's state at one time.
type Stats struct {
	// At is the time the Stats describe, on the driver's clock.
	At time.Duration
	// InFlight counts the global concurrency slots held (see Core.InFlight);
	// Waiting the calls submitted that have not started (Core.Waiting);
	// Turns the turns not yet finished.
	InFlight, Waiting, Turns int
	// Services holds one entry per service of Config.Services, by name.
	Services []ServiceStats
}

// ServiceStats is one service's state at one time.
type ServiceStats struct {
	// Name is the service's name, a key of Config.Services.
	Name string
	// InFlight counts the service's slots held; Queued its calls waiting in
	// its queue for a slot (calls still waiting for a dependency, a write
	// or fan-out room are not queued yet).
	InFlight, Queued int
	// Limit is the concurrency cap in force, in attempts in flight: the
	// adaptive limit when there is one, else Limits.MaxInFlight (0: none
	// beyond the global cap).
	Limit int
	// Limits are the service's limits as configured or last set, before
	// Headroom.
	Limits Limits
	// Requests and Tokens are what the buckets hold now, after Headroom
	// (negative: booked ahead of time for admitted calls), and NaN for a
	// bucket the service does not have (null in JSON, see MarshalJSON).
	Requests, Tokens float64
	// PausedFor is how long the service stays paused by a server's retry
	// delay (0: not paused).
	PausedFor time.Duration
}

// MarshalJSON encodes the stats as encoding/json encodes the struct, except
// that Requests and Tokens are null for a bucket the service does not have:
// JSON has no NaN, and json.Marshal refuses one.
func (s ServiceStats) MarshalJSON() ([]byte, error) {
	type plain ServiceStats // the struct without its methods
	level := func(v float64) *float64 {
		if math.IsNaN(v) {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		plain
		Requests, Tokens *float64
	}{plain(s), level(s.Requests), level(s.Tokens)})
}

// UnmarshalJSON decodes what MarshalJSON encodes, a null level as NaN.
func (s *ServiceStats) UnmarshalJSON(b []byte) error {
	type plain ServiceStats
	var v struct {
		plain
		Requests, Tokens *float64
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = ServiceStats(v.plain)
	s.Requests, s.Tokens = math.NaN(), math.NaN()
	if v.Requests != nil {
		s.Requests = *v.Requests
	}
	if v.Tokens != nil {
		s.Tokens = *v.Tokens
	}
	return nil
}

// Stats returns the Core's state at now. It changes nothing but the clock:
// timers due by now fire first, as with Advance.
func (c *Core) Stats(now time.Duration) Stats {
	c.advanceTo(now)
	c.announceWake()
	st := Stats{At: c.now, InFlight: c.inFlight, Waiting: c.waiting, Turns: c.turns.Len()}
	for _, s := range c.svcList {
		if !c.listed(s.name) {
			continue
		}
		ss := ServiceStats{Name: s.name, InFlight: s.inFlight, Queued: s.queued(), Limit: s.maxIn,
			Limits: limitsOf(s.cfg), Requests: math.NaN(), Tokens: math.NaN(), PausedFor: max(0, s.pausedUntil-c.now)}
		if s.req != nil {
			ss.Requests = s.req.Available(c.now)
		}
		if s.tok != nil {
			ss.Tokens = s.tok.Available(c.now)
		}
		st.Services = append(st.Services, ss)
	}
	return st
}

// queued counts the service's calls waiting in its queue.
func (s *serviceState) queued() int {
	n := 0
	for _, q := range s.queues() {
		for _, cs := range q.fifo[q.head:] {
			if !cs.done && cs.phase == phaseQueued {
				n++
			}
		}
		for _, cs := range q.retries {
			if !cs.done && cs.phase == phaseQueued {
				n++
			}
		}
	}
	return n
}

func limitsOf(s ServiceConfig) Limits {
	return Limits{MaxInFlight: s.MaxInFlight, RequestsPerMinute: s.RequestsPerMinute, RequestBurst: s.RequestBurst,
		TokensPerMinute: s.TokensPerMinute, TokenBurst: s.TokenBurst}
}

// SetLimits replaces the limits of a service of Config.Services at now, as
// x/time/rate's SetLimitAt does for one limiter. The new limits hold from
// now: calls already admitted keep their slots, and those booked for a
// later start are booked again, in admission order, under the new buckets
// (a call booked a day ahead under a tiny rate starts as soon as the
// raised one allows). What the buckets hold now, less those calls'
// bookings, carries over (never above the new capacity), so lowering a
// limit does not refill a bucket and raising one does not empty it. A
// bucket that did not exist starts full. Refunds of reservations made
// before the change are forfeited; a booking that a later change to the
// buckets (usage beyond an estimate, a header sync) covers keeps its start. Queued
// calls that the new token capacity can never hold fail with
// ErrNeverFits when their turn comes. It refuses an unknown service, a
// negative, NaN or infinite limit, and a rate below MinRatePerMinute.
func (c *Core) SetLimits(now time.Duration, service string, l Limits) error {
	c.advanceTo(now)
	defer c.announceWake()
	if !c.listed(service) {
		return fmt.Errorf("sched: SetLimits: unknown service %q (Config.Services lists %q)", service, c.cfg.serviceNames())
	}
	if err := l.check(); err != nil {
		return fmt.Errorf("sched: SetLimits: service %q: %w", service, err)
	}
	s := c.service(service)
	// The calls admitted for a later start leave the old buckets (those
	// whose takes are still the buckets' latest changes: all of them,
	// unless a usage report or header sync came after) and are booked
	// again under the new ones below.
	k := c.unbook(s)
	s.cfg.MaxInFlight = l.MaxInFlight
	s.cfg.RequestsPerMinute, s.cfg.RequestBurst = l.RequestsPerMinute, l.RequestBurst
	s.cfg.TokensPerMinute, s.cfg.TokenBurst = l.TokensPerMinute, l.TokenBurst
	if s.lim != nil {
		s.lim.SetBounds(limiterBounds(s.cfg.Adaptive, c.staticCap(l.MaxInFlight)))
		s.maxIn = s.lim.Cap()
	} else {
		s.maxIn = l.MaxInFlight
	}
	req, tok := serviceBuckets(s.cfg)
	s.req = bucket.Carry(s.req, req, c.now)
	s.tok = bucket.Carry(s.tok, tok, c.now)
	c.rebookPending(s, k, 0)
	c.pump()
	return nil
}

// staticCap is the tighter of a service cap and the global one (0: none).
func (c *Core) staticCap(svc int) int {
	if g := c.cfg.MaxInFlight; g > 0 && (svc == 0 || g < svc) {
		return g
	}
	return svc
}
