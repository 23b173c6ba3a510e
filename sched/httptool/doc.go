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
// [Read] is the reading of an answer's status and headers on its own (its
// class, [RetryDelay] and [Quota]), pure functions of the headers and the
// time the response arrived; a simulator that knows what a server would
// send reads it there, the same code as a live run. [ReadBody] adds what
// an error body says: its error code (insufficient_quota,
// context_length_exceeded) and a Google-style retryDelay
// (google.rpc.RetryInfo in error.details[]), which counts when no header
// gives a delay. [ReadValues] and [ReadBodyValues] read an answer whose
// rate-limit headers are given as values ([Headers]) exactly as Read and
// ReadBody read them once [Headers.Write] has written them: a simulator
// reads its server's answers without building and parsing headers.
package httptool
