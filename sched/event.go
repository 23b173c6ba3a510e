package sched

import "time"

// EventKind names a scheduler decision.
type EventKind uint8

const (
	// EventQueued: a call entered the queue of its service.
	EventQueued EventKind = iota
	// EventAdmitted: a call got its slots and bucket reservation; it starts at Event.Delay from now.
	EventAdmitted
	// EventStarted: an attempt started.
	EventStarted
	// EventFinished: an attempt finished with Event.Class.
	EventFinished
	// EventRetry: a retry is scheduled after Event.Delay for Event.Reason.
	EventRetry
	// EventCancelled: an in-flight attempt was cancelled (turn cancel, deadline, timeout, sibling failure).
	EventCancelled
	// EventResult: a call's final result was decided.
	EventResult
	// EventPaused: a service is paused until Event.Delay from now by a server delay.
	EventPaused
	// EventLimit: a service's adaptive concurrency limit changed; Event.N is
	// the new limit in attempts in flight and Event.Class the outcome that
	// moved it.
	EventLimit
)

var eventNames = [...]string{"queued", "admitted", "started", "finished", "retry", "cancelled", "result", "paused", "limit"}

// String returns the kind's name.
func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "event(?)"
}

// Event is one structured scheduler decision, handed to Config.Hook.
// Fields that do not apply to a kind are zero.
type Event struct {
	// Kind says what happened; At when, on the driver's clock (the now
	// of the Core call that decided it).
	Kind EventKind
	At   time.Duration
	// Turn and Tag are the turn's id and its Turn.Tag; CallID is the
	// call's Call.ID and Service its service's name; Attempt the
	// attempt's id (zero before it starts).
	Turn    TurnID
	Tag     any
	CallID  string
	Service string
	Attempt AttemptID
	// N is the attempt number of the call (1 for the first attempt), or the
	// new limit of an EventLimit; Class the outcome of an EventFinished or
	// EventRetry, or the one that moved an EventLimit.
	N     int
	Class Class
	// Delay is the wait an EventAdmitted, EventRetry or EventPaused announces;
	// Reason says in words why an attempt was retried or cancelled.
	Delay  time.Duration
	Reason string
	// Server tells whether the retry delay came from the server.
	Server bool
	// Err is the error of an EventResult (nil for a success), so an
	// observer can tell why a call ended, e.g. errors.Is(Err,
	// ErrBudgetExhausted).
	Err error
	// Hedge marks the start, end or cancel of a hedge (Config.Hedge).
	Hedge bool
}
