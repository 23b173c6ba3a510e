package sched

import (
	"container/heap"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/simbench/simbench/sched/internal/dag"
	"github.com/simbench/simbench/sched/satmath"
)

type callPhase uint8

const (
	phaseBlocked  callPhase = iota // waiting for dependencies, its write turn or fan-out room
	phaseQueued                    // in its service's queue
	phaseAdmitted                  // holds slots and a reservation; starts at release time
	phaseRunning                   // an attempt is in flight
	phaseBackoff                   // waiting to retry
	phaseEnded                     // an attempt just ended; the Core decides what comes next
)

// callState is the Core's view of one call. Fields are ordered and sized
// to keep it small: a 1,000-call turn allocates a thousand of them, and a
// Core driving many turns touches one or two cache lines of each per
// decision. The fields every attempt reads and writes come first; those of
// writes, retries and dependencies come last or live out of line (the
// dependents in turnState.deps, the hedges sent and the last status in the
// call's Result).
type callState struct {
	// Read and written by every attempt: its admission, start and end. The
	// pointers come first: the collector scans a callState only up to its
	// last pointer.
	turn      *turnState
	call      *Call
	svc       *serviceState
	write     *writeQueue
	seq       uint64
	attempt   AttemptID
	reserved  int64         // tokens reserved by the attempt in flight
	deadline  time.Duration // 0: none
	waitSince time.Duration
	runSince  time.Duration
	queued    time.Duration
	running   time.Duration
	tokMark   time.Duration // bucket marks of that reservation, for refunds
	idx       int32
	attempts  int32
	gen       uint32 // bumped on every phase change; stale timers compare it
	depsLeft  int32
	phase     callPhase
	done      bool
	active    bool // counts against the turn's fan-out cap
	holdsSlot bool
	started   bool // some attempt was sent
	writeWait bool // queued for its resource behind another write
	hedged    bool // a hedge is in flight (Core.hedgeOf)
	fromHedge bool // the attempt in flight or ended is a hedge
	routed    bool // the call names a route (Config.Routes)
	// hops counts the call's fallbacks on a 429, fallbacks every move
	// from one deployment of its route to another (route.go).
	hops, fallbacks uint16
	// Used with a request bucket, by retries and by a retry time budget.
	reqMark    time.Duration
	firstStart time.Duration // set only with RetryPolicy.Budget
	prevDelay  time.Duration
}

// turnState is the Core's view of one turn.
type turnState struct {
	// What an attempt's end reads and writes first (complete, decide,
	// moveOn, turnDone), together.
	id      TurnID
	tag     any
	results []Result
	left    int
	tokUsed int64
	active  int
	deps    *turnDeps   // nil: no call of the turn has dependencies
	res     *TurnResult // what the driver is handed when the turn is done, set at submission (nil: cut from a chunk then)
	fanOut  int
	fanWait []*callState
	fanHead int
	// refs counts the references to the turn and its calls' states held
	// outside it (timers, service queues, write queues, bookings); the
	// states are reused once the turn is done and refs is 0 (see reclaim).
	refs      int32
	done      bool
	join      JoinMode
	cancelled bool // cancelTurn ran: siblings need not cancel again

	calls     []Call
	states    []callState
	submitted time.Duration
	deadline  time.Duration
	tokBudget int64
	attBudget int
	attUsed   int
	exhausted error // set when a budget ran out
	// one is a one-call turn's call state (states is one[:]): cleared
	// with the turn, it needs no free list (newStates and reclaim's
	// clearing and keeping were 80 instructions of a one-call turn's
	// 2,100 in the Core).
	one [1]callState
	// _ pads a turn state to 448 bytes, a size class of whole cache
	// lines, so that the fields read first sit in the same two lines of
	// every turn (at 400 bytes, in a class of 416, they straddle a third).
	_ [48]byte
}

// turnDeps lists each call's dependents, the calls whose After names it:
// those of call i are list[start[i]:start[i+1]]. Kept out of callState,
// which every call pays for, and of turnState, which every turn does.
type turnDeps struct {
	start []int32
	list  []*callState
}

// turnOut is what the driver is handed of a one-call turn, its result and
// the TurnResult around it, allocated together. The turn's state is the
// Core's and is reused (reclaim); what the driver gets is allocated apart.
type turnOut struct {
	TurnResult
	one [1]Result
}

// Submit accepts a turn's calls at now and returns its id. It refuses a turn
// with empty or duplicate ids, unknown dependencies, a dependency cycle or
// a Service that Config.Services does not hold (an *InvalidTurnError,
// matching ErrInvalidTurn), or one that would pass Config.MaxQueued (a
// *QueueFullError, matching ErrQueueFull).
// Calls that can never run (a cost above a bucket's capacity, beyond the
// fan-out cap in truncate mode) get their error results at once.
func (c *Core) Submit(now time.Duration, t Turn) (TurnID, error) {
	c.advanceTo(now)
	// Called, not deferred: a defer was 40 instructions of a one-call
	// turn's 1,700.
	id, err := c.submit(&t)
	c.announceWake()
	return id, err
}

// submit is Submit after the clock moved, up to announcing the wake-up.
func (c *Core) submit(t *Turn) (TurnID, error) {
	if err := c.validateTurn(t.Calls); err != nil {
		return 0, err
	}
	if c.cfg.MaxQueued > 0 && c.waiting+len(t.Calls) > c.cfg.MaxQueued {
		return 0, &QueueFullError{Waiting: c.waiting, Adding: len(t.Calls), Bound: c.cfg.MaxQueued}
	}
	ts := c.newTurn(t)
	c.turns.Put(ts.id, ts)
	if len(t.Calls) == 0 {
		c.turnDone(ts)
		return ts.id, nil
	}
	svc := c.lastSvc // the previous call's: turns, and runs, mostly name one service
	for i := range ts.states {
		c.initCall(ts, i, svc)
		svc = ts.states[i].svc
	}
	c.lastSvc = svc
	if hasDeps(ts.calls) {
		c.linkDependencies(ts)
	}
	c.queueTurn(ts)
	c.pump()
	return ts.id, nil
}

// newTurn returns the state of turn t, submitted now: its budgets, join
// mode and fan-out cap with the Config's defaults filled in, and its
// deadline timer set.
func (c *Core) newTurn(t *Turn) *turnState {
	c.lastTurn++
	ts := c.newTurnState()
	n := len(t.Calls)
	switch ts.res = c.outs.reuse(n); {
	case ts.res != nil:
		// Storage the driver gave back (Recycle), lately read by it and
		// so likely still in the cache, where a chunk's is not.
		ts.results = ts.res.Results
	case n == 1:
		// A one-call turn's result lives with its TurnResult.
		out := c.outs.one()
		ts.res, ts.results = &out.TurnResult, out.one[:]
	default:
		ts.results = c.outs.resultsFor(n)
	}
	if n == 1 {
		ts.states = ts.one[:] // a one-call turn's call state lives with the turn's
	} else {
		ts.states = c.newStates(n)
	}
	// Field by field: the state is zeroed.
	ts.id, ts.tag, ts.calls = c.lastTurn, t.Tag, t.Calls
	ts.left, ts.join, ts.submitted, ts.fanOut = len(t.Calls), t.Join, c.now, c.cfg.FanOut
	ts.tokBudget, ts.attBudget = t.TokenBudget, t.AttemptBudget
	if ts.join == JoinDefault {
		ts.join = c.cfg.Join
	}
	if ts.tokBudget == 0 {
		ts.tokBudget = c.cfg.TurnTokenBudget
	}
	if ts.attBudget == 0 {
		ts.attBudget = c.cfg.TurnAttemptBudget
	}
	if d := orDefault(t.Timeout, c.cfg.TurnTimeout); d > 0 {
		ts.deadline = satmath.Add(c.now, d)
		c.setTimer(timer{at: ts.deadline, kind: timerTurn, turn: ts})
	}
	return ts
}

// initCall sets up the state of the turn's call i: its placeholder result,
// its deadline (the earlier of its own and the turn's) and timer, and for a
// write its place in the resource's write queue. The call counts as waiting.
func (c *Core) initCall(ts *turnState, i int, svc *serviceState) {
	cs := &ts.states[i]
	call := &ts.calls[i]
	c.seq++
	// Field by field: the state is freshly zeroed, and assigning a whole
	// struct would clear it again and run the GC's bulk write barrier.
	cs.turn, cs.idx, cs.call, cs.seq, cs.waitSince = ts, int32(i), call, c.seq, c.now
	if prev := svc; prev != nil && prev.name == call.Service {
		cs.svc = prev
	} else if rt := c.routes[call.Service]; rt != nil {
		cs.routed = true
		cs.svc = c.pickDeployment(rt)
	} else {
		cs.svc = c.service(call.Service)
	}
	r := &ts.results[i] // fresh and zeroed: set only what differs
	r.ID, r.Index = call.ID, i
	if d := orDefault(call.Timeout, c.cfg.CallTimeout); d > 0 {
		cs.deadline = satmath.Add(c.now, d)
	}
	if ts.deadline > 0 && (cs.deadline == 0 || ts.deadline < cs.deadline) {
		cs.deadline = ts.deadline
	}
	if cs.deadline > 0 && cs.deadline != ts.deadline {
		c.setTimer(timer{at: cs.deadline, kind: timerCall, cs: cs})
	}
	c.waiting++
	if call.Write {
		key := call.resource()
		q := c.writes[key]
		if q == nil {
			q = &writeQueue{key: key}
			c.writes[key] = q
		}
		cs.write = q
		q.pending++
	}
}

// linkDependencies records, for each call of the turn, the calls that wait
// for it and how many it waits for (validateTurn checked that every After
// names a call of the turn and that there is no cycle).
func (c *Core) linkDependencies(ts *turnState) {
	if c.index == nil {
		c.index = make(map[string]int, len(ts.calls))
	}
	index := c.index
	defer clear(index)
	for i := range ts.calls {
		index[ts.calls[i].ID] = i
	}
	// Count each call's dependents, then place them in the order the
	// calls name them: start[i+1] counts call i's, then, summed, start[i]
	// is where they begin.
	start := make([]int32, len(ts.states)+1)
	edges := 0
	for i := range ts.calls {
		for _, dep := range ts.calls[i].After {
			start[index[dep]+1]++
			edges++
		}
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	list := make([]*callState, edges)
	next := start[1:] // next[d]: where call d's next dependent goes, from start[d]
	copy(next, start[:len(start)-1])
	for i := range ts.states {
		cs := &ts.states[i]
		for _, dep := range cs.call.After {
			d := index[dep]
			list[next[d]] = cs
			next[d]++
			cs.depsLeft++
		}
	}
	// next[d] ended at the start of call d+1's: start[d+1] again.
	ts.deps = &turnDeps{start: start, list: list}
}

// queueTurn announces the turn's calls as queued, fails at once those that
// can never fit a bucket or lie beyond a truncating fan-out cap, and moves
// the rest toward the queues as their dependencies allow.
func (c *Core) queueTurn(ts *turnState) {
	if c.cfg.Hook != nil {
		for i := range ts.states {
			c.emitf(func() Event {
				return Event{Kind: EventQueued, Turn: ts.id, Tag: ts.tag, CallID: ts.calls[i].ID, Service: ts.calls[i].Service}
			})
		}
	}
	for i := range ts.states {
		cs := &ts.states[i]
		if cs.done {
			continue
		}
		if err := c.neverFits(cs); err != nil {
			c.finish(cs, ClassTooLarge, nil, err)
			continue
		}
		if ts.fanOut > 0 && c.cfg.FanOutMode == FanOutTruncate && i >= ts.fanOut {
			c.finish(cs, ClassCancelled, nil, fmt.Errorf("call %q is number %d of %d, beyond the turn's fan-out cap of %d: %w", cs.call.ID, i+1, len(ts.calls), ts.fanOut, ErrTruncated))
		}
	}
	for i := range ts.states {
		c.tryReady(&ts.states[i])
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// neverFits returns an error when the call's cost exceeds a bucket's capacity.
func (c *Core) neverFits(cs *callState) error {
	if b := cs.svc.tok; b != nil && float64(cs.call.Tokens) > b.Capacity() {
		return &NeverFitsError{Call: cs.call.ID, Service: cs.svc.name, Need: cs.call.Tokens, Capacity: int64(b.Capacity())}
	}
	if b := cs.turn.tokBudget; b > 0 && cs.call.Tokens > b {
		return &NeverFitsError{Call: cs.call.ID, Service: cs.svc.name, Need: cs.call.Tokens, Capacity: b, Budget: true}
	}
	return nil
}

// smallTurn is the size up to which duplicate ids are found by comparing
// every pair, which is cheaper than building a map.
const smallTurn = 16

// validateTurn rejects empty or duplicate ids, unknown dependencies, cycles
// and unknown services, listing every problem.
func (c *Core) validateTurn(calls []Call) error {
	if len(calls) <= smallTurn && c.validSmall(calls) {
		return nil
	}
	var e InvalidTurnError // on the stack: most turns are valid
	if c.index == nil {
		c.index = make(map[string]int, len(calls))
	}
	index := c.index
	defer clear(index)
	for i := range calls {
		id := calls[i].ID
		switch _, dup := index[id]; {
		case id == "":
			e.Problems = append(e.Problems, fmt.Sprintf("call %d has an empty id", i))
		case dup:
			e.Problems = append(e.Problems, fmt.Sprintf("call id %q appears more than once", id))
		default:
			index[id] = i
		}
	}
	for i := range calls {
		for _, dep := range calls[i].After {
			if _, ok := index[dep]; !ok {
				e.Problems = append(e.Problems, fmt.Sprintf("call %q depends on unknown id %q", calls[i].ID, dep))
			}
		}
	}
	known := "" // the last service found listed: turns mostly name one
	for i := range calls {
		name := calls[i].Service
		if name == "" || name == known {
			continue
		}
		if c.listed(name) {
			known = name
			continue
		}
		if !slices.Contains(e.UnknownServices, name) {
			e.UnknownServices = append(e.UnknownServices, name)
			e.Problems = append(e.Problems, fmt.Sprintf("call %q names service %q, which Config.Services does not list (it lists %s)", calls[i].ID, name, c.serviceNames()))
		}
	}
	if !c.validPriorities(calls) {
		e.Problems = append(e.Problems, c.priorityProblems(calls)...)
	}
	if len(e.Problems) == 0 && hasDeps(calls) {
		if cycle := findCycle(calls, index); cycle != nil {
			e.Problems = append(e.Problems, "dependency cycle: "+strings.Join(cycle, " → "))
		}
	}
	if len(e.Problems) > 0 {
		return &InvalidTurnError{Problems: e.Problems, UnknownServices: e.UnknownServices}
	}
	return nil
}

// listed reports whether the Config lists the service.
func (c *Core) listed(name string) bool {
	if _, ok := c.cfg.Services[name]; ok {
		return true
	}
	_, ok := c.cfg.Routes[name]
	return ok
}

// serviceNames lists the Config's services for an error message.
func (c *Core) serviceNames() string {
	var names []string
	for _, s := range c.svcList {
		if c.listed(s.name) {
			names = append(names, fmt.Sprintf("%q", s.name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.cfg.Routes)) {
		names = append(names, fmt.Sprintf("route %q", name))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// hasDeps reports whether any call names dependencies.
func hasDeps(calls []Call) bool {
	for i := range calls {
		if len(calls[i].After) > 0 {
			return true
		}
	}
	return false
}

// validSmall reports whether a small turn is valid, in one pass over its
// calls: ids set and distinct, no dependencies, services listed and
// priorities in range. (Four passes, one per rule, were 50 more
// instructions of a one-call turn's 1,300 in the Core.)
func (c *Core) validSmall(calls []Call) bool {
	for i := range calls {
		call := &calls[i]
		id := call.ID
		if id == "" || len(call.After) > 0 || !c.knownClass(call.Priority) {
			return false
		}
		// The last service found listed: turns, and runs, mostly name one.
		if name := call.Service; name != "" && name != c.listedName {
			if !c.listed(name) {
				return false
			}
			c.listedName = name
		}
		last := id[len(id)-1]
		for j := range i {
			// Ids of one turn mostly differ in their last byte (a
			// counter): comparing it first spares most pairs a call to
			// compare the bytes. Earlier ids are not empty.
			if o := calls[j].ID; len(o) == len(id) && o[len(o)-1] == last && o == id {
				return false
			}
		}
	}
	return true
}

// findCycle returns one dependency cycle as a list of ids (first repeated
// last, each needing the next), or nil.
func findCycle(calls []Call, index map[string]int) []string {
	nodes := dag.FindCycle(len(calls), func(i int) int { return len(calls[i].After) },
		func(i, k int) int { return index[calls[i].After[k]] })
	if nodes == nil {
		return nil
	}
	cycle := make([]string, len(nodes))
	for i, n := range nodes {
		cycle[i] = calls[n].ID
	}
	return cycle
}

// tryReady moves a blocked call into its service's queue once its
// dependencies are done, it heads its resource's write queue and the turn's
// fan-out cap has room.
func (c *Core) tryReady(cs *callState) {
	if cs.done || cs.phase != phaseBlocked || cs.depsLeft > 0 {
		return
	}
	if q := cs.write; q != nil && q.holder != cs {
		if q.holder != nil {
			if !cs.writeWait {
				cs.writeWait = true
				cs.turn.refs++
				heap.Push(&q.waiting, cs)
			}
			return
		}
		q.holder = cs
	}
	t := cs.turn
	if !cs.active && t.fanOut > 0 {
		if t.active >= t.fanOut {
			t.fanWait = append(t.fanWait, cs)
			return
		}
	}
	if !cs.active {
		cs.active = true
		t.active++
	}
	if t.exhausted != nil {
		c.finish(cs, ClassCancelled, nil, t.exhausted)
		return
	}
	c.enqueue(cs)
}

// enqueue puts a call in its service's queue in admission order.
func (c *Core) enqueue(cs *callState) {
	if cs.routed && !c.warm(cs.svc) {
		c.reroute(cs)
	}
	cs.phase = phaseQueued
	cs.gen++
	s := cs.svc.queueOf(cs)
	cs.turn.refs++
	c.queued++
	if n := len(s.fifo); n == s.head || s.fifo[n-1].seq < cs.seq {
		s.fifo = append(s.fifo, cs)
		return
	}
	heap.Push(&s.retries, cs)
}

// cancelTurn ends every unfinished call of t with err.
func (c *Core) cancelTurn(t *turnState, err error) {
	if t.cancelled {
		return
	}
	t.cancelled = true
	for i := range t.states {
		if cs := &t.states[i]; !cs.done {
			c.finish(cs, ClassCancelled, nil, err)
		}
	}
}

// exhaust marks the turn's budget spent and ends its calls that have not
// started an attempt now.
func (c *Core) exhaust(t *turnState, err error) {
	if t.exhausted != nil {
		return
	}
	t.exhausted = err
	for i := range t.states {
		cs := &t.states[i]
		if !cs.done && cs.phase != phaseRunning {
			c.finish(cs, ClassCancelled, nil, err)
		}
	}
}
