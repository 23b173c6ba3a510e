package sim

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/quota"
)

// proc is one agent process of a run: a scheduler of its own with its own
// attempts in flight and wake-ups, the turns it runs, and, under the
// shared quota, its leases on the shared buckets. Every process sends to
// the same service models, so to the same limits.
type proc struct {
	core     *sched.Core
	attempts *attemptIndex // in flight: slab entries by attempt id
	wakeSeq  uint64
	leases   []serviceLeases // by service index (QuotaShared only)
	stats    procStats       // multi-process runs only
}

// serviceLeases are a process's leases on one service's shared buckets:
// one request per attempt, and the call's tokens. Nil: no such limit.
type serviceLeases struct{ req, tok *quota.Lease }

// procStats are one process's figures.
type procStats struct {
	turns, failedTurns, unfinished          int64
	calls, goodCalls, attempts, rateLimited int64
	roundTrips                              int64 // to the shared quota store
	okTurnLat                               *histogram
}

func (s *procStats) result(r *sched.Result, window time.Duration) {
	if r.Finished > window {
		return // unfinished at the end, as in the strategy's figures
	}
	s.calls++
	if r.Err == nil && r.Finished <= window {
		s.goodCalls++
	}
}

func (s *procStats) turn(latency time.Duration, failed bool) {
	s.turns++
	if failed {
		s.failedTurns++
	} else {
		s.okTurnLat.add(latency)
	}
}

// newProcesses makes the run's processes from the strategy's scheduler
// configuration. Process 0 draws from the stream a one-process run uses,
// so a scenario without processes runs exactly as before.
func (e *engine) newProcesses(cfg sched.Config) error {
	sc, st := e.sc, e.st
	n := max(sc.Workload.Processes, 1)
	e.procs = make([]proc, n)
	e.multi = n > 1
	if st.Quota.Mode == scenarios.QuotaShared {
		e.quota = newSharedQuota(sc, st, func() time.Duration { return e.now })
	}
	for p := range e.procs {
		c := cfg
		c.Rand = stream(sc.Seed, "strategy/"+st.Name)
		if p > 0 {
			c.Rand = stream(sc.Seed, "strategy/"+st.Name+"/process/"+strconv.Itoa(p))
		}
		var traceHook, limitHook func(sched.Event)
		if e.trace != nil {
			traceHook = e.trace.hookFor(uint16(p))
		}
		if p == 0 && e.limits != nil {
			limitHook = e.limits.see
		}
		c.Hook = chainHooks(limitHook, traceHook)
		core, err := sched.New(c)
		if err != nil {
			return fmt.Errorf("strategy %q: %w", st.Name, err)
		}
		if p == 0 && e.limits != nil {
			e.limits.begin(core)
		}
		e.procs[p] = proc{core: core, attempts: newAttemptIndex()}
		if e.multi {
			e.procs[p].stats.okTurnLat = newHistogram()
		}
		if e.quota != nil {
			e.procs[p].leases = e.quota.leases()
		}
	}
	return nil
}

// ProcessSchedConfig is SchedConfig for one of the workload's processes
// under the strategy's quota mode: under QuotaSplit every service's rates
// and capacities are divided among Workload.Processes (see splitServices);
// otherwise it is SchedConfig. The caller sets Rand and Hook. Live runs of
// several processes use it so that they pace as the simulator does.
func ProcessSchedConfig(sc *scenarios.Scenario, st *scenarios.Strategy) (sched.Config, error) {
	cfg, err := SchedConfig(sc, st)
	if err != nil {
		return cfg, err
	}
	if st.Quota.Mode == scenarios.QuotaSplit {
		cfg.Services = splitServices(cfg.Services, max(sc.Workload.Processes, 1))
	}
	return cfg, nil
}

// QuotaLimits returns the shared buckets the strategy's quota uses, by
// service name: a request bucket (one unit per attempt) for every service
// with a request limit and a token bucket for every service with a token
// limit, at the service's published limits scaled by the strategy's
// headroom, named by the service's client key ("default" without one).
// The simulator's model of QuotaShared and a live run's quota.Gate use the
// same buckets.
func QuotaLimits(sc *scenarios.Scenario, st *scenarios.Strategy) (requests, tokens map[string]quota.Limit) {
	requests, tokens = map[string]quota.Limit{}, map[string]quota.Limit{}
	for i, l := range quotaLimits(sc, st) {
		name := sc.Services[i].Name
		if l.req != nil {
			requests[name] = *l.req
		}
		if l.tok != nil {
			tokens[name] = *l.tok
		}
	}
	return requests, tokens
}

// quotaLimits returns the shared buckets of every service, in service order.
func quotaLimits(sc *scenarios.Scenario, st *scenarios.Strategy) []serviceLimits {
	h := st.Headroom
	if !(h > 0) {
		h = 1
	}
	var out []serviceLimits
	for i := range sc.Services {
		svc := &sc.Services[i]
		key := svc.ClientKey()
		if key == "" {
			key = "default"
		}
		var l serviceLimits
		if rpm := svc.RequestsPerMinuteLimit(); rpm > 0 {
			l.req = &quota.Limit{Key: key, Service: svc.Name, Kind: "rpm", PerMinute: rpm * h, Burst: svc.RequestBurst() * h}
		}
		if tpm := svc.TokensPerMinute; tpm > 0 {
			l.tok = &quota.Limit{Key: key, Service: svc.Name, Kind: "tpm", PerMinute: tpm * h, Burst: tpm * h}
		}
		out = append(out, l)
	}
	return out
}

// splitServices returns the services' configurations with every rate and
// capacity divided among n processes: limit ÷ n, request bursts at least 1.
func splitServices(svcs map[string]sched.ServiceConfig, n int) map[string]sched.ServiceConfig {
	out := make(map[string]sched.ServiceConfig, len(svcs))
	f := float64(n)
	for name, s := range svcs {
		if s.RequestsPerMinute > 0 {
			burst := s.RequestBurst
			if burst <= 0 {
				burst = max(1, s.RequestsPerMinute/60)
			}
			s.RequestsPerMinute /= f
			s.RequestBurst = max(1, burst/f)
		}
		if s.TokensPerMinute > 0 {
			burst := s.TokenBurst
			if burst <= 0 {
				burst = s.TokensPerMinute
			}
			s.TokensPerMinute /= f
			s.TokenBurst = burst / f
		}
		out[name] = s
	}
	return out
}

// sharedQuota models, in virtual time, the quota every process of a run
// shares (scenarios.QuotaShared): the buckets are sched/quota's Memory
// backend on the engine's clock (the same arithmetic as its Redis
// script), each process reaches them through sched/quota's Lease, and
// every call to the backend is one round trip to the store, which delays
// the attempt by the modelled RTT. The backend applies each operation at
// the instant the process sends it (not half a round trip later): a
// simplification that makes the store answer in send order.
type sharedQuota struct {
	backend *countingBackend
	now     func() time.Time
	q       scenarios.Quota
	limits  []serviceLimits // by service index
}

// serviceLimits are one service's shared buckets (nil: no such limit).
type serviceLimits struct{ req, tok *quota.Limit }

// virtualEpoch is the wall time virtual time 0 stands for in the quota
// model; only differences matter.
var virtualEpoch = time.UnixMicro(0)

func newSharedQuota(sc *scenarios.Scenario, st *scenarios.Strategy, now func() time.Duration) *sharedQuota {
	clock := func() time.Time { return virtualEpoch.Add(now()) }
	return &sharedQuota{backend: &countingBackend{Backend: quota.NewMemory(clock)}, now: clock, q: st.Quota, limits: quotaLimits(sc, st)}
}

// leases returns one process's leases on every shared bucket. Without a
// lease TTL the slices hold exactly what is asked for, so every take is
// one round trip.
func (q *sharedQuota) leases() []serviceLeases {
	out := make([]serviceLeases, len(q.limits))
	mk := func(l *quota.Limit) *quota.Lease {
		if l == nil {
			return nil
		}
		ls := &quota.Lease{Backend: q.backend, Limit: *l, Now: q.now, TTL: q.q.Lease, Min: 1, Max: q.q.LeaseMax * l.Burst}
		if q.q.Lease <= 0 {
			ls.TTL, ls.Min, ls.Max = time.Second, math.SmallestNonzeroFloat64, math.SmallestNonzeroFloat64
		}
		return ls
	}
	for i, l := range q.limits {
		out[i] = serviceLeases{req: mk(l.req), tok: mk(l.tok)}
	}
	return out
}

// countingBackend counts the calls made to a Backend: each is one round
// trip to the store.
type countingBackend struct {
	quota.Backend
	trips int64
}

// Reserve implements quota.Backend, counting a round trip.
func (c *countingBackend) Reserve(ctx context.Context, l quota.Limit, n float64, maxWait time.Duration) (quota.Reservation, error) {
	c.trips++
	return c.Backend.Reserve(ctx, l, n, maxWait)
}

// Settle implements quota.Backend, counting a round trip.
func (c *countingBackend) Settle(ctx context.Context, l quota.Limit, reserved, actual float64, m quota.Mark) error {
	c.trips++
	return c.Backend.Settle(ctx, l, reserved, actual, m)
}

// Refund implements quota.Backend, counting a round trip.
func (c *countingBackend) Refund(ctx context.Context, l quota.Limit, n float64, m quota.Mark) error {
	c.trips++
	return c.Backend.Refund(ctx, l, n, m)
}

// Available implements quota.Backend, counting a round trip.
func (c *countingBackend) Available(ctx context.Context, l quota.Limit) (float64, error) {
	c.trips++
	return c.Backend.Available(ctx, l)
}

// gatedAttempt is an attempt the scheduler started that is still taking
// its units from the shared quota, as sched/quota's Gate does inside the
// attempt: the attempt holds its concurrency slot and its timeout runs.
type gatedAttempt struct {
	act   sched.Action
	slot  int32 // its slab entry
	stage uint8 // 0: taking its request, 1: its tokens, 2: granted, in the round trip's return
	dead  bool  // the scheduler cancelled it
}

// gateStart puts an attempt the scheduler started in front of the shared
// quota.
func (e *engine) gateStart(a *sched.Action) {
	i := e.newAttempt()
	var g int32
	if n := len(e.freeG); n > 0 {
		g = e.freeG[n-1]
		e.freeG = e.freeG[:n-1]
	} else {
		e.gated = append(e.gated, gatedAttempt{})
		g = int32(len(e.gated) - 1)
	}
	e.gated[g] = gatedAttempt{act: *a, slot: i}
	e.slab[i] = attempt{id: a.Attempt, proc: uint16(e.p), gate: g + 1}
	e.procs[e.p].attempts.put(a.Attempt, i)
	e.gate(g)
}

// gate moves a gated attempt on: it takes the attempt's request, then its
// tokens, from the process's leases, each take costing the round trips it
// made × RTT; a take refused polls again after the wait the bucket gave
// (at least 1 ms), as Gate does. When both are granted it sends the attempt.
func (e *engine) gate(g int32) {
	ga := &e.gated[g]
	pr := &e.procs[e.p]
	ls := &pr.leases[ga.act.Call.Payload.(*callMeta).svc]
	if ga.dead {
		if ga.stage == 1 && ls.req != nil {
			ls.req.Return(1) // its request was granted, its tokens were not
		}
		e.freeAttempt(ga.slot)
		e.freeGate(g)
		return
	}
	for ga.stage < 2 {
		l, n := ls.req, 1.0
		if ga.stage == 1 {
			l, n = ls.tok, float64(ga.act.Call.Tokens)
		}
		if l == nil || n <= 0 {
			ga.stage++
			continue
		}
		before := e.quota.backend.trips
		ok, wait, err := l.Take(context.Background(), n, 0)
		if err != nil {
			panic("sim: the in-memory quota failed: " + err.Error()) // Memory never errs
		}
		trips := e.quota.backend.trips - before
		pr.stats.roundTrips += trips
		delay := time.Duration(trips) * e.quota.q.RTT
		if !ok {
			e.schedule(event{at: e.now + delay + max(wait, time.Millisecond), kind: evGate, ref: g, proc: uint16(e.p)})
			return
		}
		ga.stage++
		if delay > 0 {
			e.schedule(event{at: e.now + delay, kind: evGate, ref: g, proc: uint16(e.p)})
			return
		}
	}
	act, i := ga.act, ga.slot
	e.freeGate(g)
	e.send(&act, i)
}

func (e *engine) freeGate(g int32) {
	e.gated[g] = gatedAttempt{}
	e.freeG = append(e.freeG, g)
}

// processResults returns each process's figures (multi-process runs).
func (e *engine) processResults() []results.ProcessResult {
	if !e.multi {
		return nil
	}
	out := make([]results.ProcessResult, len(e.procs))
	secs := e.m.window.Seconds()
	for p := range e.procs {
		s := &e.procs[p].stats
		out[p] = results.ProcessResult{
			Name: "p" + strconv.Itoa(p+1), Share: round6(e.agents.shares[p]),
			Turns: s.turns, FailedTurns: s.failedTurns, UnfinishedTurns: s.unfinished,
			Calls: s.calls, Attempts: s.attempts,
			GoodputPerS:     round6(float64(s.goodCalls) / secs),
			RateLimited:     s.rateLimited,
			AnswerLatencyMs: s.okTurnLat.answerSummary(uint64(s.turns)),
			QuotaRoundTrips: s.roundTrips,
		}
	}
	return out
}
