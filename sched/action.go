package sched

import "time"

// ActionKind names what a driver must do.
type ActionKind uint8

const (
	// ActStart: start attempt Attempt of Call; report its outcome with Core.Complete.
	ActStart ActionKind = iota
	// ActCancel: cancel attempt Attempt of Call at the transport. Its outcome
	// no longer matters; Complete for it is ignored.
	ActCancel
	// ActWake: call Core.Advance at At (replacing any earlier wake-up request).
	ActWake
	// ActResult: one call's result is final (for streaming).
	ActResult
	// ActTurnDone: every result of a turn is final; Turn carries them in order.
	ActTurnDone
	// ActCredit: ask the shared quota for at least Credit.Units of
	// Credit.Kind for Credit.Service; answer with Core.Credit or
	// Core.CreditRefused. One is outstanding per service and kind.
	ActCredit
	// ActReturnCredit: grant Credit.Ticket has ended; give its
	// Credit.Units back to the shared quota (0: all were spent; negative:
	// charge that many more). Each grant ends once.
	ActReturnCredit
)

// Action is one decision a driver carries out. Which fields are set depends on Kind.
type Action struct {
	// Kind says what to do (ActStart...).
	Kind ActionKind
	// Attempt is the attempt to start (ActStart) or cancel (ActCancel).
	Attempt AttemptID
	// TurnID and Tag identify the turn of a start, cancel or result.
	TurnID TurnID
	Tag    any
	// Call is the call to run (ActStart) or whose attempt to cancel
	// (ActCancel), so that a driver can keep what it needs to find an
	// attempt in the call's Payload instead of a table by attempt id;
	// Index is the call's position in its Turn.Calls; N is the attempt's
	// number, from 1 (ActStart).
	Call *Call
	// Deployment is the service an ActStart's attempt goes to: the
	// Call's Service, or the deployment chosen when it names a route
	// (Config.Routes).
	Deployment string
	N          int
	Index      int
	// Hedge marks an ActStart of a hedge (Config.Hedge): a second attempt
	// of the call, N the number of the attempt it hedges.
	Hedge bool
	// At is the wake-up time (ActWake).
	At time.Duration
	// Result is the call's result (ActResult).
	Result *Result
	// Turn holds the turn's results (ActTurnDone).
	Turn *TurnResult
	// Credit details an ActCredit or ActReturnCredit.
	Credit *CreditAction
}
