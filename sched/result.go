package sched

import "time"

// State says how far a call got, which matters when it failed: a call
// cancelled in flight may have had its side effect.
type State uint8

const (
	// NotStarted: no attempt of the call was ever sent.
	NotStarted State = iota
	// CancelledInFlight: an attempt was running when the call was cancelled;
	// its outcome is unknown (the tool may have run).
	CancelledInFlight
	// Completed: the last attempt finished and its outcome is known.
	Completed
)

var stateNames = [...]string{"not_started", "cancelled_in_flight", "completed"}

// String returns the state's snake_case name.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "state(?)"
}

// Result is the one result of one call.
type Result struct {
	// ID and Index identify the call: its ID and its position in Turn.Calls.
	ID    string
	Index int
	// Value is the successful attempt's value.
	Value any
	// Err is nil on success; otherwise it explains the failure and matches the
	// package's sentinel errors with errors.Is where one applies.
	Err error
	// Class is the last attempt's outcome class, or ClassCancelled when the
	// scheduler ended the call.
	Class Class
	// State says whether the call never started, was cancelled in flight, or completed.
	State State
	// HedgeWon says the value came from a hedge (Config.Hedge); Hedges
	// counts the hedges sent. (Both sit in State's padding, so a Result
	// costs no more for them.)
	HedgeWon bool
	// Fallbacks counts the call's moves from one deployment of its route
	// to another (Config.Routes): on a 429 asking for too long a wait, or
	// away from a deployment that cools down.
	Fallbacks int16
	Hedges    int32
	// Attempts counts attempts started, hedges not included.
	Attempts int
	// Queued is the time spent waiting to start (for a slot, a bucket, a
	// dependency or a backoff); Running is the time attempts were in flight.
	Queued, Running time.Duration
	// Deployment is, for a call naming a route, the deployment of its
	// last attempt (the one that answered), or where it waited when no
	// attempt started; empty for a call naming a service.
	Deployment string
	// Status is the last attempt's HTTP status, 0 when none.
	Status int
	// Finished is when the result was decided, on the driver's clock.
	Finished time.Duration
}

// IsError reports whether the call failed, in the sense of a tool result's is_error.
func (r *Result) IsError() bool { return r.Err != nil }

// TurnResult carries every result of a turn, in the caller's order. It and
// its Results are the driver's until it gives them back with Core.Recycle.
type TurnResult struct {
	// Turn is the turn's id (as Core.Submit returned it) and Tag its
	// Turn.Tag; Results holds one result per call, in Turn.Calls' order.
	Turn    TurnID
	Tag     any
	Results []Result
	// Submitted and Finished are on the driver's clock.
	Submitted, Finished time.Duration
}
