// Package httptool runs a tool call as an HTTP request and turns the response
// into a [sched.Outcome]: the outcome class that decides whether the
// scheduler retries, the server's retry delay from any of the usual headers,
// and the token usage that settles the call's reservation.
//
// Most callers want a [Tool] whose Execute method is the scheduler's
// executor:
//
//	tool := &httptool.Tool{Client: client, Build: httptool.PostJSON(url, nil)}
//	outcome := tool.Execute(ctx, call, attempt) // what the Runner calls
//
// [RetryDelay] is the header parsing on its own, a pure function of the
// headers and the time the response arrived.
package httptool
