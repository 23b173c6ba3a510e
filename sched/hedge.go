package sched

import (
	"fmt"
	"math"
	"time"

	"github.com/simbench/simbench/sched/internal/latency"
	"github.com/simbench/simbench/sched/satmath"
)

// Defaults of a HedgePolicy's zero fields.
const (
	// DefaultHedgeBudget is the hedges allowed per attempt started.
	DefaultHedgeBudget = 0.1
	// DefaultHedgeBurst is the most hedges a service banks.
	DefaultHedgeBurst = 10
	// DefaultHedgeWindow is the recent first attempts' latencies a
	// percentile is taken over.
	DefaultHedgeWindow = 100
	// DefaultHedgeMinSamples is the latencies a percentile needs before it
	// is used (fewer when the window is smaller).
	DefaultHedgeMinSamples = 20
)

// HedgePolicy sends a second attempt (a hedge) of a call that is slow to
// answer, and keeps the first success: the other attempt is cancelled at
// the transport. Only idempotent reads are hedged (Call.Idempotent set,
// Call.Write not): a write holds its resource alone, and a second copy of
// it in flight would be the overlap writes are serialized to avoid.
//
// A hedge is an attempt like any other: it takes a global and a service
// slot, a request from the service's request bucket and the call's Tokens
// from its token bucket, and counts against the turn's attempt and token
// budgets. It is sent only when all of these allow it at once and no call
// waits in the service's queue — a hedge never takes a slot or quota a
// waiting call could use — and is skipped otherwise. A service on shared
// credit (ServiceConfig.CreditRequests, CreditTokens) sends no hedges.
//
// Each attempt has at most one hedge, sent Delay after it started while it
// is still in flight. The two attempts then race:
//   - the first success is the call's result; the other attempt is cancelled
//     (ActCancel) and its outcome ignored;
//   - a failed hedge is dropped while the first attempt still runs: it is
//     not retried;
//   - a failed first attempt leaves the hedge running as the call's attempt;
//     only when it fails too does the retry policy decide, as for any
//     attempt, so the call fails only when every attempt in flight failed
//     and its retries are exhausted.
//
// Hedges are not counted in RetryPolicy.MaxAttempts or Result.Attempts;
// Result.Hedges and Result.HedgeWon report them.
type HedgePolicy struct {
	// After is the delay from an attempt's start to its hedge. With
	// Percentile it is the least delay, and the delay while too few
	// latencies are known (0: no hedge until then).
	After time.Duration
	// Percentile, in (0, 1), sets the delay to that percentile of the
	// latencies of the service's first attempts, so that a share
	// 1 − Percentile of them is hedged where the budget and caps allow
	// (0.95: the slowest 5%). A first attempt is an attempt that is not a
	// hedge (a call's attempt or one of its retries); its latency is the
	// time from its start to its successful answer. One cut short without
	// an answer (lost to its hedge, cancelled, timed out) counts as slower
	// than the time it ran; a failed one does not count. The percentile is
	// estimated over the last Window first attempts once MinSamples are
	// known (see hedgeService for how).
	Percentile float64
	// Window is the first attempts' latencies kept per service (0:
	// DefaultHedgeWindow).
	Window int
	// MinSamples is the latencies needed before Percentile applies (0:
	// DefaultHedgeMinSamples, at most Window).
	MinSamples int
	// Budget bounds hedges to a fraction of the service's other attempts:
	// each attempt that is not a hedge adds Budget to the service's
	// allowance, each hedge takes 1, so hedges never exceed Budget × the
	// attempts (0: DefaultHedgeBudget; at most 1).
	Budget float64
	// Burst is the most allowance a service banks, so that a long quiet
	// spell cannot be spent as a flood of hedges (0: DefaultHedgeBurst).
	Burst float64
}

func (p *HedgePolicy) validate() error {
	switch {
	case p.After < 0:
		return fmt.Errorf("sched: hedge delay %v is negative", p.After)
	case !(p.Percentile >= 0 && p.Percentile < 1):
		return fmt.Errorf("sched: hedge percentile %v outside [0, 1)", p.Percentile)
	case p.After == 0 && p.Percentile == 0:
		return fmt.Errorf("sched: a hedge policy needs After or Percentile")
	case p.Window < 0 || p.MinSamples < 0:
		return fmt.Errorf("sched: negative hedge window or sample count")
	case !(p.Budget >= 0 && p.Budget <= 1):
		return fmt.Errorf("sched: hedge budget %v outside [0, 1]", p.Budget)
	case !(p.Burst >= 0) || math.IsInf(p.Burst, 0):
		return fmt.Errorf("sched: hedge burst %v is negative or infinite", p.Burst)
	}
	return nil
}

// hedgeService is one service's hedging state: its allowance and the
// latencies of its recent first attempts.
//
// A first attempt is an attempt that is not a hedge (a call's attempt or
// one of its retries), and its latency is the time from its start to its
// successful answer. Percentile is a percentile of these, not of the
// calls' answers: the hedges themselves shorten the answers, so a
// percentile of the winning attempts' latencies falls as hedges win and
// hedges more calls (0.95 hedged 11.9% of exponential latencies so).
// First attempts that never answer are kept as censored samples (see
// package latency).
type hedgeService struct {
	budget, burst float64
	allowance     float64
	lat           *latency.Window // the last first attempts' latencies; nil without Percentile
	minSamples    int
}

func newHedgeService(p *HedgePolicy) *hedgeService {
	h := &hedgeService{budget: p.Budget, burst: p.Burst, minSamples: p.MinSamples}
	if h.budget == 0 {
		h.budget = DefaultHedgeBudget
	}
	if h.burst == 0 {
		h.burst = DefaultHedgeBurst
	}
	w := p.Window
	if w == 0 {
		w = DefaultHedgeWindow
	}
	if h.minSamples == 0 {
		h.minSamples = DefaultHedgeMinSamples
	}
	h.minSamples = min(h.minSamples, w)
	if p.Percentile > 0 {
		h.lat = latency.NewWindow(w)
	}
	return h
}

// observe records a first attempt's latency d: its answer's, or, censored,
// the time it ran before it was cut short without an answer.
func (h *hedgeService) observe(d time.Duration, censored bool) {
	if h.lat != nil {
		h.lat.Observe(d, censored)
	}
}

// delay returns the delay of a hedge of an attempt starting now, and false
// when none is to be sent.
func (h *hedgeService) delay(p *HedgePolicy) (time.Duration, bool) {
	if p.Percentile == 0 {
		return p.After, true
	}
	if h.lat.Len() < h.minSamples {
		return p.After, p.After > 0
	}
	return max(p.After, h.lat.Percentile(p.Percentile)), true
}

// hedgeState is a hedge in flight: its attempt and what it took.
type hedgeState struct {
	cs               *callState
	attempt          AttemptID
	start            time.Duration
	reserved         int64
	reqMark, tokMark time.Duration
}

// hedgeable reports whether the call may be hedged under a policy.
func (cs *callState) hedgeable() bool {
	return cs.call.Idempotent && !cs.call.Write && !cs.svc.usesCredit()
}

// armHedge accounts for an attempt (not a hedge) that starts now on a
// service with a hedge policy, and sets the timer of its hedge.
func (c *Core) armHedge(cs *callState) {
	h := cs.svc.hedge
	h.allowance = min(h.allowance+h.budget, h.burst)
	cs.fromHedge = false
	if !cs.hedgeable() {
		return
	}
	d, ok := h.delay(c.cfg.Hedge)
	if !ok {
		return
	}
	c.setTimer(timer{at: satmath.Add(c.now, d), kind: timerHedge, cs: cs, gen: cs.gen})
}

// sendHedge sends a hedge of the call's attempt in flight, when the budget,
// the caps, the buckets and the turn's budgets allow it now and no call
// waits for the service.
func (c *Core) sendHedge(cs *callState) {
	s, t := cs.svc, cs.turn
	tokens := cs.call.Tokens
	switch {
	case cs.phase != phaseRunning || cs.hedged || s.hedge.allowance < 1:
		return
	case c.cfg.MaxInFlight > 0 && c.inFlight >= c.cfg.MaxInFlight:
		return
	case s.maxIn > 0 && s.inFlight >= s.maxIn:
		return
	case t.exhausted != nil || (t.attBudget > 0 && t.attUsed >= t.attBudget):
		return
	case t.tokBudget > 0 && satmath.Add(t.tokUsed, tokens) > t.tokBudget:
		return
	case c.earliest(cs) > c.now || c.peek(s) != nil:
		return
	}
	hs := &hedgeState{cs: cs, start: c.now, reserved: tokens}
	if s.req != nil {
		hs.reqMark = s.req.Take(c.now, 1)
	}
	if s.tok != nil {
		hs.tokMark = s.tok.Take(c.now, float64(tokens))
	}
	c.inFlight++
	s.inFlight++
	t.attUsed++
	t.tokUsed = satmath.Add(t.tokUsed, tokens)
	s.hedge.allowance--
	c.lastAttempt++
	hs.attempt = c.lastAttempt
	cs.hedged = true
	t.results[cs.idx].Hedges++
	if c.hedging == nil {
		c.hedging = make(map[AttemptID]*hedgeState)
		c.hedgeOf = make(map[*callState]*hedgeState)
	}
	c.hedging[hs.attempt] = hs
	c.hedgeOf[cs] = hs
	if c.cfg.Hook != nil {
		c.emitf(func() Event {
			return Event{Kind: EventStarted, Turn: t.id, Tag: t.tag, CallID: cs.call.ID, Service: s.name, Attempt: hs.attempt, N: int(cs.attempts), Hedge: true}
		})
	}
	c.out = append(c.out, Action{Kind: ActStart, Attempt: hs.attempt, TurnID: t.id, Tag: t.tag, Call: cs.call, Deployment: cs.svc.name, N: int(cs.attempts), Index: int(cs.idx), Hedge: true})
}

// endHedge forgets the call's hedge and gives back its slots.
func (c *Core) endHedge(cs *callState) *hedgeState {
	hs := c.hedgeOf[cs]
	cs.hedged = false
	delete(c.hedgeOf, cs)
	delete(c.hedging, hs.attempt)
	c.inFlight--
	cs.svc.inFlight--
	return hs
}

// hedgeDone handles a hedge's outcome while the call's first attempt is
// still in flight: a success wins and cancels that attempt; a failure is
// dropped.
func (c *Core) hedgeDone(cs *callState, o Outcome) {
	s, t := cs.svc, cs.turn
	hs := c.endHedge(cs)
	if o.HasUsage && s.tok != nil {
		if diff := satmath.Sub(o.Tokens, hs.reserved); diff > 0 {
			s.tok.Take(c.now, float64(diff))
		} else if diff < 0 {
			s.tok.Refund(-float64(diff), hs.tokMark)
		}
		t.tokUsed = satmath.Add(t.tokUsed, satmath.Sub(o.Tokens, hs.reserved))
	}
	if c.cfg.Hook != nil {
		c.emitf(func() Event {
			return Event{Kind: EventFinished, Turn: t.id, Tag: t.tag, CallID: cs.call.ID, Service: s.name, Attempt: hs.attempt, N: int(cs.attempts), Class: o.Class, Hedge: true}
		})
	}
	if o.Class != ClassSuccess {
		return
	}
	// The first attempt loses and is cancelled: its latency is not known,
	// only that it is above the time it ran (hedgeService).
	s.hedge.observe(c.now-cs.runSince, true)
	if b := s.budget; b != nil {
		b.Success(c.now)
	}
	// The hedge won: cancel the first attempt at the transport.
	c.out = append(c.out, Action{Kind: ActCancel, Attempt: cs.attempt, TurnID: t.id, Tag: t.tag, Call: cs.call, Index: int(cs.idx)})
	if c.cfg.Hook != nil {
		c.emitf(func() Event {
			return Event{Kind: EventCancelled, Turn: t.id, Tag: t.tag, CallID: cs.call.ID, Service: s.name, Attempt: cs.attempt, N: int(cs.attempts), Reason: "its hedge answered first"}
		})
	}
	c.endAttempt(cs)
	cs.fromHedge = true
	t.results[cs.idx].Status = int(int32(o.Status))
	c.finish(cs, ClassSuccess, o.Value, nil)
}

// promoteHedge makes the hedge in flight the call's attempt when the first
// attempt failed: the call goes on waiting for it, and its outcome is
// handled as the first attempt's would have been. The call keeps one slot,
// the hedge's.
func (c *Core) promoteHedge(cs *callState) {
	hs := c.endHedge(cs)
	cs.attempt = hs.attempt
	cs.running -= c.now - hs.start // the overlap was counted with the first attempt
	cs.runSince = hs.start
	cs.reserved, cs.reqMark, cs.tokMark = hs.reserved, hs.reqMark, hs.tokMark
	cs.phase = phaseRunning
	cs.gen++
	cs.fromHedge = true
	c.attempts.Put(cs.attempt, cs)
	if c.cfg.AttemptTimeout > 0 {
		c.setTimer(timer{at: satmath.Add(hs.start, c.cfg.AttemptTimeout), kind: timerAttempt, cs: cs, gen: cs.gen})
	}
}

// dropHedge cancels the hedge of a call whose result is decided.
func (c *Core) dropHedge(cs *callState) {
	hs := c.endHedge(cs)
	t := cs.turn
	c.out = append(c.out, Action{Kind: ActCancel, Attempt: hs.attempt, TurnID: t.id, Tag: t.tag, Call: cs.call, Index: int(cs.idx)})
	if c.cfg.Hook != nil {
		c.emitf(func() Event {
			return Event{Kind: EventCancelled, Turn: t.id, Tag: t.tag, CallID: cs.call.ID, Service: cs.svc.name, Attempt: hs.attempt, N: int(cs.attempts), Reason: "the call's result is decided", Hedge: true}
		})
	}
}
