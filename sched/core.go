package sched

import (
	crand "crypto/rand"
	"fmt"
	"maps"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/simbench/simbench/sched/internal/adaptive"
	"github.com/simbench/simbench/sched/internal/bucket"
	"github.com/simbench/simbench/sched/internal/idring"
	"github.com/simbench/simbench/sched/internal/slabs"
)

// Core holds every scheduling decision for any number of concurrent turns
// that share limits. It does no I/O, starts no goroutines and never reads the
// clock: each input carries the driver's current time (a duration since an
// epoch the driver chooses; it must not go backwards), and decisions
// accumulate as Actions that the driver collects with Actions.
//
// A driver loops: call Submit, Complete, Cancel or Advance; collect Actions;
// start and cancel attempts as told; call Advance at the time of the latest
// ActWake. Core is not safe for concurrent use: one goroutine owns it.
type Core struct {
	cfg      Config
	rng      *rand.Rand
	now      time.Duration
	services map[string]*serviceState
	svcList  []*serviceState // sorted by name: a deterministic scan order
	lastSvc  *serviceState   // the service of the last call submitted (services are never forgotten)
	// listedName is a service name validateTurn found in Config.Services
	// (the Core's copy, so it stays there): the next turn naming it skips
	// the map lookup, 110 instructions of a one-call turn's 1,700.
	listedName string
	writes     map[string]*writeQueue
	// routes holds Config.Routes' state (nil without routes);
	// coolingUntil is the latest end of a deployment's cooldown.
	routes       map[string]*route
	coolingUntil time.Duration

	turns    idring.Ring[TurnID, turnState]
	attempts idring.Ring[AttemptID, callState]
	// hedging and hedgeOf find the hedges in flight by attempt and by call
	// (hedge.go): kept out of callState, which every call pays for.
	hedging map[AttemptID]*hedgeState
	hedgeOf map[*callState]*hedgeState

	lastTurn    TurnID
	lastAttempt AttemptID
	seq         uint64 // admission order of calls, across turns
	timerSeq    uint64

	inFlight int // global slots held
	waiting  int // calls not yet started, for MaxQueued
	// queued counts the entries of the services' queues, finished calls
	// not yet dropped among them: at 0 pump has nothing to look at, and
	// returns at once (a one-call turn's Submit and Complete each pumped
	// once more than they admitted, 70 instructions of its 2,000 in the
	// Core).
	queued int

	timers   timerHeap
	out      []Action
	wake     time.Duration
	wakeSet  bool
	maxRetry time.Duration

	// settling is finish's worklist of decided calls whose consequences are
	// pending; inFinish says an outer finish is draining it.
	settling []settled
	inFinish bool

	// index maps the ids of the turn being validated to their positions;
	// kept and cleared between turns, so a large turn allocates no map.
	index map[string]int
	// moved is settle's scratch list of reservations to make again.
	moved []reservation

	// retired holds done turns nothing refers to any more, whose states
	// reclaim puts in free, by size class, for newStates to reuse.
	retired []*turnState
	free    slabs.Pool[callState]
	// spareTurns are cleared turn states for newTurn to reuse.
	spareTurns []*turnState
	// outs holds what drivers are handed of done turns (outChunks).
	outs outChunks
}

type serviceState struct {
	name        string
	cfg         ServiceConfig
	inFlight    int
	maxIn       int               // the cap in force: the adaptive limit, else cfg.MaxInFlight (0: none)
	lim         *adaptive.Limiter // nil without Adaptive
	req, tok    *bucket.Bucket
	budget      *bucket.Retries // nil without RetryBudget
	hedge       *hedgeService   // nil without Config.Hedge
	pausedUntil time.Duration
	// route is the first route, by name, listing the service as a
	// deployment (nil: none); streak counts its 429s in a row and
	// coolUntil is the end of its cooldown (route.go).
	route     *route
	streak    int
	coolUntil time.Duration
	callQueue              // the queue of calls waiting for admission (without classes)
	prio      *classQueues // the queues by priority class (nil: Config.Priorities unset)
	credit    [2]credit    // shared-quota units by CreditKind, with CreditRequests/CreditTokens
	// pending holds the reservations of admitted calls waiting for their
	// release time, in admission order (see settle); booked is what the
	// last book recorded.
	pending []reservation
	booked  struct{ req, tok bucket.Undo }
}

// callQueue holds calls waiting for admission to one service: fresh calls
// in admission order in fifo (head at fifo[head]) and calls back from a
// backoff in retries, by their original seq.
type callQueue struct {
	fifo    []*callState
	head    int
	retries seqHeap
}

// writeQueue serializes writes to one resource: one holds it from the moment
// it is ready to start until its result; the writes that become ready
// meanwhile wait in submission order. A write still waiting for its
// dependencies does not hold the resource, so a write that depends on a
// later write to the same resource cannot deadlock with it.
type writeQueue struct {
	key     string
	holder  *callState
	waiting seqHeap
	pending int // unfinished writes to the resource; at 0 the queue is forgotten
}

// New returns a Core for cfg, or an error naming the first impossible
// setting. The Core keeps a copy of cfg.Services: changing the map later
// does not change the Core (SetLimits does).
func New(cfg Config) (*Core, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.Services = maps.Clone(cfg.Services)
	c := &Core{
		cfg:      cfg,
		rng:      cfg.Rand,
		services: make(map[string]*serviceState),
		writes:   make(map[string]*writeQueue),
		maxRetry: cfg.MaxRetryAfter,
	}
	if c.rng == nil {
		c.rng = unseeded()
	}
	if c.maxRetry <= 0 {
		c.maxRetry = DefaultMaxRetryAfter
	}
	for _, name := range cfg.serviceNames() {
		c.service(name)
	}
	c.initRoutes()
	return c, nil
}

// unseeded returns a generator seeded from crypto/rand, so that processes
// built with a nil Config.Rand draw different jitter and do not retry in
// step.
func unseeded() *rand.Rand {
	var seed [32]byte
	crand.Read(seed[:]) // never fails (crypto/rand: "Read ... never returns an error")
	return rand.New(rand.NewChaCha8(seed))
}

// service returns the state of the named service, creating an unlimited one
// for names the Config does not list.
func (c *Core) service(name string) *serviceState {
	if s, ok := c.services[name]; ok {
		return s
	}
	sc := c.cfg.Services[name]
	s := &serviceState{name: name, cfg: sc, maxIn: sc.MaxInFlight}
	if len(c.cfg.Priorities) > 0 {
		s.prio = newClassQueues(c.cfg.Priorities)
	}
	if sc.Adaptive != nil {
		s.lim = newLimiter(sc.Adaptive, c.staticCap(sc.MaxInFlight))
		s.maxIn = s.lim.Cap()
	}
	s.req, s.tok = serviceBuckets(sc)
	if sc.RetryBudget != nil {
		s.budget = newRetryBudget(sc.RetryBudget, c.now)
	}
	if c.cfg.Hedge != nil {
		s.hedge = newHedgeService(c.cfg.Hedge)
	}
	c.services[name] = s
	c.svcList = append(c.svcList, s)
	sort.Slice(c.svcList, func(i, j int) bool { return c.svcList[i].name < c.svcList[j].name })
	return s
}

// serviceBuckets returns the request and token buckets of a service's
// configuration (nil for a limit it does not set).
func serviceBuckets(sc ServiceConfig) (req, tok *bucket.Bucket) {
	h := sc.headroom()
	reqBurst := sc.RequestBurst
	if reqBurst <= 0 {
		reqBurst = max(1, sc.RequestsPerMinute/60)
	}
	tokBurst := sc.TokenBurst
	if tokBurst <= 0 {
		tokBurst = sc.TokensPerMinute
	}
	return bucket.New(sc.RequestsPerMinute, reqBurst, h), bucket.New(sc.TokensPerMinute, tokBurst, h)
}

// Actions appends the decisions made since the last call to dst and returns
// it; the Core forgets them. Result and TurnResult pointers stay valid and
// become the driver's.
func (c *Core) Actions(dst []Action) []Action {
	dst = append(dst, c.out...)
	clear(c.out)
	c.out = c.out[:0]
	return dst
}

// SwapActions returns the decisions made since the last call and takes buf
// (its contents are discarded) to collect the next ones in: unlike Actions
// it copies nothing. The returned slice is the driver's until it passes it
// back to SwapActions. Result and TurnResult pointers stay valid and become
// the driver's. The Core does not clear buf: the pointers in it are
// overwritten by the next decisions, so what a driver's buffers keep alive
// is bounded by the largest batch of decisions.
func (c *Core) SwapActions(buf []Action) []Action {
	out := c.out
	c.out = buf[:0]
	return out
}

// Now returns the latest time the Core was given.
func (c *Core) Now() time.Duration { return c.now }

// InFlight returns the concurrency slots held globally: attempts running,
// admitted calls waiting for their bucket reservation, and calls keeping their
// slot through a backoff.
func (c *Core) InFlight() int { return c.inFlight }

// Waiting returns the calls submitted that have not started their first attempt.
func (c *Core) Waiting() int { return c.waiting }

// Turns returns the number of turns not yet finished.
func (c *Core) Turns() int { return c.turns.Len() }

// Advance processes every timer due at or before now and admits what can start.
func (c *Core) Advance(now time.Duration) {
	c.advanceTo(now)
	c.announceWake()
}

// Recycle gives back a done turn's TurnResult (an ActTurnDone's Turn) once
// the driver has read it: the Core hands it and its Results to a later turn
// of as many calls, instead of new storage. A driver that recycles every
// turn allocates no results in its steady state, and the next turn writes
// to memory the driver has just read, not to memory long out of the cache.
//
// After Recycle the driver must not read r, r.Results or any *Result an
// ActResult handed it for that turn: a later turn's results will be
// written there. Recycling is optional; a TurnResult not given back stays
// the driver's for as long as it likes. Recycling nil, a TurnResult given
// back already (until a later turn is handed it), or one the Core does not
// keep (a turn of more than 16 calls) does nothing.
func (c *Core) Recycle(r *TurnResult) {
	if r != nil {
		c.outs.recycle(r)
	}
}

// Complete reports the outcome of attempt a. Outcomes of attempts the Core
// already cancelled (timeouts, turn cancels) or does not know are ignored.
func (c *Core) Complete(now time.Duration, a AttemptID, o Outcome) {
	c.advanceTo(now)
	if cs, ok := c.attempts.Get(a); ok {
		c.complete(cs, o)
		c.pump()
	} else if hs, ok := c.hedging[a]; ok {
		c.hedgeDone(hs.cs, o)
		c.pump()
	}
	c.announceWake()
}

// mayAbandon reports whether the Core may decide a call of turn id while an
// attempt of it still runs, so that the attempt's executor can outlive its
// call's result: a deadline of the turn or of a call, an attempt timeout
// (the call retries, or gives up, without the hung attempt), a hedge that
// answers first, or an all-or-nothing turn whose sibling fails. Cancel does
// so too; its driver knows when it may call it. A turn already done
// reports false: no attempt of it will start.
func (c *Core) mayAbandon(id TurnID) bool {
	if c.cfg.AttemptTimeout > 0 {
		return true
	}
	t, ok := c.turns.Get(id)
	if !ok {
		return false
	}
	if t.deadline > 0 || t.join == JoinAllOrNothing {
		return true
	}
	for i := range t.states {
		cs := &t.states[i]
		if cs.deadline > 0 || (c.cfg.Hedge != nil && cs.hedgeable()) {
			return true
		}
	}
	return false
}

// Cancel ends every unfinished call of turn id: queued calls get a
// not-started ErrCancelled result, in-flight attempts are cancelled at the
// transport (an ActCancel each) and their calls get a cancelled-in-flight
// result. Cancelling a finished or unknown turn does nothing.
func (c *Core) Cancel(now time.Duration, id TurnID) {
	c.cancelFor(now, id, nil)
}

// cancelFor is Cancel for a cause, which the calls' errors wrap beside
// ErrCancelled (nil: none).
func (c *Core) cancelFor(now time.Duration, id TurnID, cause error) {
	c.advanceTo(now)
	if t, ok := c.turns.Get(id); ok {
		err := fmt.Errorf("turn cancelled: %w", ErrCancelled)
		if cause != nil {
			err = fmt.Errorf("turn cancelled: %w: %w", cause, ErrCancelled)
		}
		c.cancelTurn(t, err)
		c.pump()
	}
	c.announceWake()
}

// advanceTo fires due timers in time order, each at its own time, then moves
// the clock to now.
func (c *Core) advanceTo(now time.Duration) {
	for {
		at, ok := c.nextTimer()
		if !ok || at > now {
			break
		}
		t := c.timers.pop()
		if t.at > c.now {
			c.now = t.at
		}
		c.fire(&t)
		c.unrefTimer(&t)
		c.pump()
	}
	if now > c.now {
		c.now = now
	}
}

func (c *Core) fire(t *timer) {
	switch t.kind {
	case timerRelease:
		c.release(t.cs)
	case timerBackoff:
		c.backoffDone(t.cs)
	case timerAttempt:
		c.attemptTimedOut(t.cs)
	case timerCall:
		c.finish(t.cs, ClassCancelled, nil, fmt.Errorf("call %q: deadline of %v passed: %w", t.cs.call.ID, t.cs.deadline-t.cs.turn.submitted, ErrDeadline))
	case timerTurn:
		c.cancelTurn(t.turn, fmt.Errorf("turn deadline of %v passed: %w", t.turn.deadline-t.turn.submitted, ErrDeadline))
	case timerPause, timerClass, timerCool:
		// pump runs after every timer; nothing else to do.
	case timerCredit:
		c.creditExpired(t)
	case timerHedge:
		c.sendHedge(t.cs)
	}
}

// announceWake emits ActWake when the earliest timer changed, and reclaims
// the states of retired turns: every public method ends here, when no
// decision in progress still points into them.
func (c *Core) announceWake() {
	if len(c.retired) > 0 {
		c.reclaim()
	}
	at, ok := c.nextTimer()
	if !ok {
		c.wakeSet = false
		return
	}
	if c.wakeSet && c.wake == at {
		return
	}
	c.wake, c.wakeSet = at, true
	c.out = append(c.out, Action{Kind: ActWake, At: at})
}

func (c *Core) emit(e Event) {
	e.At = c.now
	c.cfg.Hook(e)
}

// emitf hands the Hook the event mk builds. The event is built in mk's
// frame, not the caller's: an Event literal in each decision function would
// make their frames, and so the stack every driver goroutine needs, several
// times larger (the Runner's profile showed stack growth as a fifth of a
// no-op attempt's CPU).
//
//go:noinline
func (c *Core) emitf(mk func() Event) { c.emit(mk()) }

// seqHeap orders calls by their admission sequence number.
type seqHeap []*callState

func (h seqHeap) Len() int           { return len(h) }
func (h seqHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h seqHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *seqHeap) Push(x any)        { *h = append(*h, x.(*callState)) }
func (h *seqHeap) Pop() any {
	old := *h
	cs := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return cs
}
