// Package check grades an agent runtime's concurrency hygiene from what a
// fake provider saw of it: `simbench check` serves a scenario's services,
// runs the client (or waits for one), and grades every client's requests
// to every service against the rules of the scenario's [check] table.
//
// The grading is a pure function of the server's request log
// ([fakeapi.Record]s) and the [Rules]: [Grade] reads no clock and starts no
// goroutines, so a log graded twice gives the same lines. A client is what
// the X-Simbench-Client header names, else its API key (see
// fakeapi.Record.Client). An attempt belongs to a logical call by its
// Idempotency-Key, else by its identity (client, method, path and body):
// it retries the earliest open call of its identity whose last attempt had
// failed, or one whose last attempt was still being served when it
// declares a retry (x-stainless-retry-count or X-Simbench-Retry above 0)
// or declares nothing and came at least Rules.RetryGap after that attempt
// (a retry after a timeout); otherwise it is a new call, so parallel
// identical calls stay apart. A model request of the client begins a new
// round: identical tool calls of two rounds are two calls. An attempt
// with a new Idempotency-Key is matched by identity the same way, so an
// outer layer's retries (an agent's around its SDK's) count as one call's.
//
// Each line is PASS, NOT MEASURED (nothing in the run to measure; the
// figure names a scenario that measures it), WARN or FAIL with the figure
// measured and the rule; [Report.Verdict] is the worst of them.
package check
