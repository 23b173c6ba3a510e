package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/quota"
)

// quotaStore is the shared quota store (a Redis) of a QuotaShared run as
// the simulator models it: one sched/quota Memory backend for the whole
// fleet, on the engine's clock, reached by each process through the
// production quota path: the process's Core, configured as a Runner given
// sched.WithQuota is (sched.CreditConfig), asks for credit; the engine
// answers through the process's own quota.Shared over the production
// quota.Failover (newFailover, as a live process has) over a connection
// (storeConn) that costs one round trip of rtt per backend operation.
// Each operation reaches the store half a round trip after it is sent and
// its answer the process a round trip after; operations one Shared call
// makes in a row (a reservation refused at its sized grant, then made for
// what the call needs) are sent one after the other's answer. A round
// trip longer than the quota's timeout, or one reaching the store during
// its outage (scenarios.Quota.OutageAt), fails: Failover then switches
// the process to its fallback as in production.
type quotaStore struct {
	mem     *quota.Memory
	q       scenarios.Quota
	n       int           // the fleet's processes
	end     time.Duration // the run's end: time on the fallback counts up to it
	rtt     time.Duration
	timeout time.Duration
	at      time.Duration // when the operation being applied reaches the store
	ops     int64         // operations the store applied
}

func newQuotaStore(q scenarios.Quota, processes int, end time.Duration) *quotaStore {
	s := &quotaStore{q: q, n: max(processes, 1), end: end, rtt: q.RTT, timeout: failoverSettings(q).timeout}
	s.mem = quota.NewMemory(func() time.Time { return virtualEpoch.Add(s.at) })
	return s
}

// down reports whether an operation reaching the store at t finds it in
// its outage.
func (s *quotaStore) down(t time.Duration) bool {
	return s.q.OutageFor > 0 && t >= s.q.OutageAt && t < s.q.OutageEnd()
}

// virtualEpoch is the wall time virtual time 0 stands for in the quota
// model; only differences matter.
var virtualEpoch = time.UnixMicro(0)

// sharedKey names the simulated fleet's API key in the store.
const sharedKey = "sim"

// procQuota is one process's side of the shared quota: its quota.Shared
// (grant sizing, as in a live Runner), its connection to the store, and
// the grants its Core holds, by ticket, as a Runner keeps them.
type procQuota struct {
	shared *quota.Shared
	fail   *quota.Failover
	conn   *storeConn
	grants map[uint64]sched.Grant
	ticket uint64
	// fallbacks counts the process's switches to its fallback, fallbackS
	// the time it spent on it in closed periods; downSince is when the
	// open one began (-1: on the store).
	fallbacks int
	fallbackS time.Duration
	downSince time.Duration
}

// connect returns a process's quota for the scheduler configuration cfg
// (newFailover and newSharedQuota at the scenario's own time): Failover
// reads the process's clock and arms no timer, since the connection
// times its own round trips out.
func (s *quotaStore) connect(cfg sched.Config) *procQuota {
	q := &procQuota{conn: &storeConn{s: s}, grants: map[uint64]sched.Grant{}, downSince: -1}
	q.fail = NewFailover(q.conn, s.q, s.n, 1, func(e quota.Event) { q.switched(e, s.end) })
	q.fail.Timeout = -1
	q.fail.Now = func() time.Time { return virtualEpoch.Add(q.conn.clock) }
	q.shared = NewSharedQuota(q.fail, sharedKey, cfg, s.q, s.n, 1)
	return q
}

// switched records a switch of the process to or from its fallback,
// counting time on it up to end.
func (q *procQuota) switched(e quota.Event, end time.Duration) {
	at := min(e.At.Sub(virtualEpoch), end)
	if e.Down {
		q.fallbacks++
		q.downSince = at
		return
	}
	if q.downSince >= 0 {
		q.fallbackS += at - q.downSince
		q.downSince = -1
	}
}

// fallback returns the process's switches to its fallback and the time it
// spent on it up to end (0, 0 without a shared quota).
func (q *procQuota) fallback(end time.Duration) (int, time.Duration) {
	if q == nil {
		return 0, 0
	}
	d := q.fallbackS
	if q.downSince >= 0 {
		d += max(end-q.downSince, 0)
	}
	return q.fallbacks, d
}

// failover are a shared quota's failover settings with the defaults
// filled in, at the scenario's own time.
type failover struct {
	timeout, probeEvery time.Duration
	policy              quota.Policy
}

// failoverSettings returns q's failover settings, the defaults of
// scenarios (sched/quota's) where q sets none.
func failoverSettings(q scenarios.Quota) failover {
	fo := failover{timeout: q.Timeout, probeEvery: q.ProbeEvery, policy: quota.FallbackLocal}
	if fo.timeout <= 0 {
		fo.timeout = scenarios.DefaultQuotaTimeout
	}
	if fo.probeEvery <= 0 {
		fo.probeEvery = scenarios.DefaultQuotaProbeEvery
	}
	if q.Fallback == scenarios.FallbackClosed {
		fo.policy = quota.FailClosed
	}
	return fo
}

// NewFailover returns the quota.Failover a process of a fleet of n puts
// between its quota.Shared and the shared store primary, as the
// strategy's quota q says, at time scale f (1 in virtual time; a live
// run's LiveOptions.TimeScale): each round trip bounded by q's timeout × f,
// a probe of an unreachable store every q.ProbeEvery × f, and while it is
// unreachable q's fallback, a local share of limit ÷ n or a refusal. The
// simulated and the live fleet both build theirs here, so they fail over
// alike; onSwitch sees each switch (may be nil).
func NewFailover(primary quota.Backend, q scenarios.Quota, n int, f float64, onSwitch func(quota.Event)) *quota.Failover {
	fo := failoverSettings(q)
	return &quota.Failover{Primary: primary, Policy: fo.policy, Processes: max(n, 1),
		Timeout: setup.ScaleD(fo.timeout, f), ProbeEvery: setup.ScaleD(fo.probeEvery, f), OnSwitch: onSwitch}
}

// NewSharedQuota returns the quota.Shared on b of one of n processes for
// the scheduler configuration cfg, as a strategy's quota q says, at time
// scale f (1 for a run in virtual time; a live run's
// LiveOptions.TimeScale): its grants valid for q.Lease × f and at most
// q.LeaseShare(n) of a bucket's burst; without a lease, each grant is
// exactly the units the waiting call needs (one round trip per call),
// valid for quota.DefaultLeaseTTL × f. The simulated and the live fleet
// both build theirs here, so they size grants alike.
func NewSharedQuota(b quota.Backend, key string, cfg sched.Config, q scenarios.Quota, n int, f float64) *quota.Shared {
	sh := quota.NewShared(b, key, cfg)
	sh.TTL, sh.Max = q.Lease, q.LeaseShare(n)
	if q.Lease <= 0 {
		sh.TTL, sh.Max = quota.DefaultLeaseTTL, math.SmallestNonzeroFloat64
	}
	sh.TTL = setup.ScaleD(sh.TTL, f)
	return sh
}

// roundTrips returns the round trips the process made to the store (0
// without a shared quota).
func (q *procQuota) roundTrips() int64 {
	if q == nil {
		return 0
	}
	return q.conn.trips
}

// storeConn is one process's connection to the store, a quota.Backend:
// each operation is a round trip sent at clock, which it then advances by
// the round trip, or by the timeout for one that fails so.
type storeConn struct {
	s     *quotaStore
	clock time.Duration // the process's time: when its next operation is sent
	trips int64
}

// The errors of the simulated store's failed round trips.
var (
	errStoreDown = errors.New("simulated quota store: connection refused (outage)")
	errStoreHung = fmt.Errorf("simulated quota store: no answer during the outage: %w", context.DeadlineExceeded)
	errStoreSlow = fmt.Errorf("simulated quota store: round trip longer than the timeout: %w", context.DeadlineExceeded)
)

// trip models one round trip: reached says the operation reached the
// store, which applies it at that instant; err that its answer did not
// come back in time. An operation reaching the store during an outage is
// not applied: refused one round trip after it was sent (at most the
// timeout), or unanswered until the timeout. One that reaches it but whose
// round trip is longer than the timeout is applied, and its answer lost.
func (c *storeConn) trip() (reached bool, err error) {
	s := c.s
	arrive := c.clock + s.rtt/2
	c.trips++
	if s.down(arrive) {
		if s.q.Outage == scenarios.OutageHung || s.rtt > s.timeout {
			c.clock += s.timeout
			return false, errStoreHung
		}
		c.clock += s.rtt
		return false, errStoreDown
	}
	s.at = arrive
	s.ops++
	if s.rtt > s.timeout {
		c.clock += s.timeout
		return true, errStoreSlow
	}
	c.clock += s.rtt
	return true, nil
}

// Reserve implements quota.Backend.
func (c *storeConn) Reserve(ctx context.Context, l quota.Limit, n float64, maxWait time.Duration) (quota.Reservation, error) {
	reached, err := c.trip()
	if !reached {
		return quota.Reservation{}, err
	}
	r, _ := c.s.mem.Reserve(ctx, l, n, maxWait) // Memory never errs
	if err != nil {
		return quota.Reservation{}, err
	}
	return r, nil
}

// Settle implements quota.Backend.
func (c *storeConn) Settle(ctx context.Context, l quota.Limit, reserved, actual float64, m quota.Mark) error {
	reached, err := c.trip()
	if reached {
		_ = c.s.mem.Settle(ctx, l, reserved, actual, m)
	}
	return err
}

// Refund implements quota.Backend.
func (c *storeConn) Refund(ctx context.Context, l quota.Limit, n float64, m quota.Mark) error {
	reached, err := c.trip()
	if reached {
		_ = c.s.mem.Refund(ctx, l, n, m)
	}
	return err
}

// Available implements quota.Backend.
func (c *storeConn) Available(ctx context.Context, l quota.Limit) (float64, error) {
	reached, err := c.trip()
	if !reached {
		return 0, err
	}
	a, _ := c.s.mem.Available(ctx, l)
	if err != nil {
		return 0, err
	}
	return a, nil
}

// pendingCredit is a process's request for credit on its way: the
// reservation's round trips, then the wait the store gave.
type pendingCredit struct {
	act  sched.CreditAction
	pend quota.Pending
	err  error
}

// reserveCredit answers a Core's ActCredit as a Runner does
// (Shared.Acquire in the background, the call waiting in its queue without
// a slot), on virtual time: the reservation is made now, and the grant
// must be handed to the Core (grantCredit) at the time it returns, when
// its round trips and its wait are over.
func (pr *proc) reserveCredit(now time.Duration, c *sched.CreditAction) (time.Duration, pendingCredit) {
	q := pr.quota
	q.conn.clock = now
	p, err := q.shared.ReserveAt(context.Background(), virtualEpoch.Add(now), c.Service, c.Kind, c.Units)
	at := q.conn.clock
	if err == nil {
		at += p.Wait
	}
	return at, pendingCredit{act: *c, pend: p, err: err}
}

// grantCredit hands the Core the grant (or the refusal) of pc, now.
func (pr *proc) grantCredit(now time.Duration, pc *pendingCredit) {
	if pc.err != nil {
		pr.core.CreditRefused(now, pc.act.Service, pc.act.Kind, pc.err)
		return
	}
	q := pr.quota
	g := q.shared.GrantAt(pc.pend, virtualEpoch.Add(now))
	q.ticket++
	q.grants[q.ticket] = g
	pr.core.Credit(now, g.Service, g.Kind, g.Units, g.Until.Sub(virtualEpoch), q.ticket)
}

// returnCredit gives a grant's unspent units (or a debt) back to the
// store at now, as a Runner does, without waiting for the answer.
func (pr *proc) returnCredit(now time.Duration, c *sched.CreditAction) {
	q := pr.quota
	g, ok := q.grants[c.Ticket]
	delete(q.grants, c.Ticket)
	if !ok {
		g = sched.Grant{Service: c.Service, Kind: c.Kind}
	}
	if ok || c.Units < 0 {
		q.conn.clock = now
		// Failover takes what the store cannot (a refund is forfeited, a
		// debt charged locally); under FailClosed a debt the store cannot
		// take is lost with it.
		_ = q.shared.Return(context.Background(), g, c.Units)
	}
}

// acquire asks the shared quota for credit c (reserveCredit), to be
// granted at an evCredit.
func (e *engine) acquire(c *sched.CreditAction) {
	at, pc := e.procs[e.p].reserveCredit(e.now, c)
	var i int32
	if n := len(e.freeQ); n > 0 {
		i = e.freeQ[n-1]
		e.freeQ = e.freeQ[:n-1]
	} else {
		e.credits = append(e.credits, pendingCredit{})
		i = int32(len(e.credits) - 1)
	}
	e.credits[i] = pc
	e.schedule(Event{At: at, Kind: evCredit, Ref: i, proc: uint16(e.p)})
}

// credited hands the Core the grant (or the refusal) of pending credit i.
func (e *engine) credited(i int32) {
	pc := e.credits[i]
	e.credits[i] = pendingCredit{}
	e.freeQ = append(e.freeQ, i)
	e.procs[e.p].grantCredit(e.now, &pc)
}
