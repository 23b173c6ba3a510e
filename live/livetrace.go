package live

import (
	"sync"
	"time"

	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/trace"
)

// liveTrace is a live run's tracing state: the calls of the sched turns in
// progress, by their payload, so that the executor can tell an attempt's
// turn and when it was due. Entries leave when their sched turn ends.
type liveTrace struct {
	W     *trace.Writer
	mu    sync.Mutex
	Calls map[*agent.CallMeta]*liveCall
}

// liveTurn is one agent turn of a live run.
type liveTurn struct {
	Session, No int64
}

// livePart is one sched turn of a live run, its Tag.
type livePart struct {
	turn  *liveTurn
	calls map[string]*liveCall
}

// liveCall is one call in progress: when its next attempt is due and the
// delay chosen before it, in the scenario's seconds.
type liveCall struct {
	turn     *liveTurn
	intended float64
	delay    float64
}

// Begin registers the calls of a sched turn submitted at now (scenario
// seconds) and returns its tag.
func (t *liveTrace) Begin(lt *liveTurn, calls []sched.Call, now float64) *livePart {
	p := &livePart{turn: lt, calls: make(map[string]*liveCall, len(calls))}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range calls {
		c := &liveCall{turn: lt, intended: now}
		p.calls[calls[i].ID] = c
		t.Calls[calls[i].Payload.(*agent.CallMeta)] = c
	}
	return p
}

// End forgets the calls of a sched turn.
func (t *liveTrace) End(calls []sched.Call) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range calls {
		delete(t.Calls, calls[i].Payload.(*agent.CallMeta))
	}
}

// Retry notes the delay the scheduler chose before a call's next attempt
// (in the scenario's seconds) at now.
func (t *liveTrace) Retry(ev sched.Event, now, delay float64) {
	p, ok := ev.Tag.(*livePart)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := p.calls[ev.CallID]; c != nil {
		c.intended, c.delay = now+delay, delay
	}
}

// Attempt writes the record of one attempt of call, sent at start and
// answered at end (scenario seconds) with o; retryAfter is the server's
// delay in the scenario's time.
func (t *liveTrace) Attempt(call *sched.Call, n int, start, end float64, o sched.Outcome, retryAfter time.Duration) error {
	meta := call.Payload.(*agent.CallMeta)
	t.mu.Lock()
	c := t.Calls[meta]
	var r trace.Record
	if c != nil {
		r = trace.Record{Session: c.turn.Session, Turn: c.turn.No, Intended: min(c.intended, start)}
		if n > 1 {
			r.RetryDelay = c.delay
		}
	}
	t.mu.Unlock()
	r.Call, r.Service, r.Tool, r.Attempt = call.ID, call.Service, call.Tool, n
	if meta.Tool < 0 {
		r.Kind, r.Tool = trace.KindModel, ""
	}
	if c == nil {
		r.Intended = start
	}
	r.Start, r.End = start, max(end, start)
	r.Outcome, r.Status, r.Tokens = o.Class.String(), o.Status, call.Tokens
	if o.HasUsage {
		r.Tokens = o.Tokens
	}
	if o.HasRetryAfter {
		r.RetryAfter, r.HasRetryAfter = retryAfter.Seconds(), true
	}
	return t.W.Write(r)
}
