package sim

import (
	"context"
	"math"
	"time"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/quota"
)

// quotaStore is the shared quota store (a Redis) of a QuotaShared run as
// the simulator models it: one sched/quota Memory backend for the whole
// fleet, on the engine's clock, reached by each process through the
// production quota path: the process's Core, configured as a Runner given
// sched.WithQuota is (sched.CreditConfig), asks for credit; the engine
// answers through the process's own quota.Shared over a connection
// (storeConn) that costs one round trip of rtt per backend operation.
// Each operation reaches the store half a round trip after it is sent and
// its answer the process a round trip after; operations one Shared call
// makes in a row (a reservation refused at its sized grant, then made for
// what the call needs) are sent one after the other's answer.
type quotaStore struct {
	mem *quota.Memory
	q   scenarios.Quota
	rtt time.Duration
	at  time.Duration // when the operation being applied reaches the store
	ops int64         // operations the store applied
}

func newQuotaStore(q scenarios.Quota) *quotaStore {
	s := &quotaStore{q: q, rtt: q.RTT}
	s.mem = quota.NewMemory(func() time.Time { return virtualEpoch.Add(s.at) })
	return s
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
	conn   *storeConn
	grants map[uint64]sched.Grant
	ticket uint64
}

// connect returns a process's quota for the scheduler configuration cfg
// (newSharedQuota at the scenario's own time).
func (s *quotaStore) connect(cfg sched.Config) *procQuota {
	c := &storeConn{s: s}
	sh := newSharedQuota(c, sharedKey, cfg, s.q, 1)
	return &procQuota{shared: sh, conn: c, grants: map[uint64]sched.Grant{}}
}

// newSharedQuota returns a process's quota.Shared on b for the scheduler
// configuration cfg, as a strategy's quota q says, at time scale f (1 for
// a run in virtual time; a live run's LiveOptions.TimeScale): its grants
// valid for q.Lease × f and at most q.LeaseMax of a bucket's burst;
// without a lease, each grant is exactly the units the waiting call needs
// (one round trip per call), valid for quota.DefaultLeaseTTL × f. The
// simulated and the live fleet both build theirs here, so they size
// grants alike.
func newSharedQuota(b quota.Backend, key string, cfg sched.Config, q scenarios.Quota, f float64) *quota.Shared {
	sh := quota.NewShared(b, key, cfg)
	sh.TTL, sh.Max = q.Lease, q.LeaseMax
	if q.Lease <= 0 {
		sh.TTL, sh.Max = quota.DefaultLeaseTTL, math.SmallestNonzeroFloat64
	}
	sh.TTL = scaleD(sh.TTL, f)
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
// the round trip.
type storeConn struct {
	s     *quotaStore
	clock time.Duration // the process's time: when its next operation is sent
	trips int64
}

// trip models one round trip: the store applies the operation at the
// instant it reaches it.
func (c *storeConn) trip() {
	c.s.at = c.clock + c.s.rtt/2
	c.clock += c.s.rtt
	c.trips++
	c.s.ops++
}

// Reserve implements quota.Backend.
func (c *storeConn) Reserve(ctx context.Context, l quota.Limit, n float64, maxWait time.Duration) (quota.Reservation, error) {
	c.trip()
	return c.s.mem.Reserve(ctx, l, n, maxWait)
}

// Settle implements quota.Backend.
func (c *storeConn) Settle(ctx context.Context, l quota.Limit, reserved, actual float64, m quota.Mark) error {
	c.trip()
	return c.s.mem.Settle(ctx, l, reserved, actual, m)
}

// Refund implements quota.Backend.
func (c *storeConn) Refund(ctx context.Context, l quota.Limit, n float64, m quota.Mark) error {
	c.trip()
	return c.s.mem.Refund(ctx, l, n, m)
}

// Available implements quota.Backend.
func (c *storeConn) Available(ctx context.Context, l quota.Limit) (float64, error) {
	c.trip()
	return c.s.mem.Available(ctx, l)
}

// pendingCredit is a process's request for credit on its way: the
// reservation's round trips, then the wait the store gave.
type pendingCredit struct {
	act  sched.CreditAction
	pend quota.Pending
	err  error
}

// acquire answers a Core's ActCredit as a Runner does (Shared.Acquire in
// the background, the call waiting in its queue without a slot), on
// virtual time: the reservation is made now, the grant handed to the Core
// when its round trips and its wait are over (evCredit).
func (e *engine) acquire(c *sched.CreditAction) {
	q := e.procs[e.p].quota
	q.conn.clock = e.now
	p, err := q.shared.ReserveAt(context.Background(), virtualEpoch.Add(e.now), c.Service, c.Kind, c.Units)
	at := q.conn.clock
	if err == nil {
		at += p.Wait
	}
	var i int32
	if n := len(e.freeQ); n > 0 {
		i = e.freeQ[n-1]
		e.freeQ = e.freeQ[:n-1]
	} else {
		e.credits = append(e.credits, pendingCredit{})
		i = int32(len(e.credits) - 1)
	}
	e.credits[i] = pendingCredit{act: *c, pend: p, err: err}
	e.schedule(event{at: at, kind: evCredit, ref: i, proc: uint16(e.p)})
}

// credited hands the Core the grant (or the refusal) of pending credit i.
func (e *engine) credited(i int32) {
	pc := e.credits[i]
	e.credits[i] = pendingCredit{}
	e.freeQ = append(e.freeQ, i)
	pr := &e.procs[e.p]
	if pc.err != nil {
		pr.core.CreditRefused(e.now, pc.act.Service, pc.act.Kind, pc.err)
		return
	}
	q := pr.quota
	g := q.shared.GrantAt(pc.pend, virtualEpoch.Add(e.now))
	q.ticket++
	q.grants[q.ticket] = g
	pr.core.Credit(e.now, g.Service, g.Kind, g.Units, g.Until.Sub(virtualEpoch), q.ticket)
}

// returnCredit gives a grant's unspent units (or a debt) back to the store,
// as a Runner does, without waiting for the answer.
func (e *engine) returnCredit(c *sched.CreditAction) {
	q := e.procs[e.p].quota
	g, ok := q.grants[c.Ticket]
	delete(q.grants, c.Ticket)
	if !ok {
		g = sched.Grant{Service: c.Service, Kind: c.Kind}
	}
	if ok || c.Units < 0 {
		q.conn.clock = e.now
		_ = q.shared.Return(context.Background(), g, c.Units) // Memory never errs
	}
}
