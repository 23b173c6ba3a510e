package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/simbench/simbench/check"
	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/scenarios"
)

// CheckCmd serves a scenario's services, runs a client against them (or
// waits for one) and grades what each client did: its concurrency, 429s,
// retries, cancellation and writes.
type CheckCmd struct {
	Scenario string           `arg:"" name:"file|name" predictor:"scenario" help:"A scenario file, or the name of a built-in scenario; its [check] table sets the rules."`
	Command  []string         `arg:"" optional:"" passthrough:"" help:"The client to run, after --: it gets the services' base URLs in its environment (SIMBENCH_URL_<SERVICE>, SIMBENCH_TOOL_URL_<TOOL>, OPENAI_BASE_URL, ANTHROPIC_BASE_URL, ...). Without one, check waits for clients for --duration or until Ctrl-C."`
	Duration positiveDuration `help:"How long to serve: without a command, how long to wait for clients (default: until Ctrl-C); with one, the most it may run before it is interrupted; with --gateway, how long to send load (default: 1m)."`
	JSON     bool             `help:"Print the grades as JSON (the client's output goes to standard error)."`
	Gateway  string           `placeholder:"URL" help:"Grade the rate-limiting gateway at this base URL, which forwards to the service's URL check prints, against the per-key limits of the scenario's [check.gateway] table: check sends each key's requests through it for --duration (default 1m) and needs no client command."`
	Expect   []string         `sep:"none" placeholder:"KEY:rpm=N,tpm=N" help:"Declare an API key's limits as the gateway promises them, in place of the scenario's [check.gateway] keys (repeat it for more keys): rpm and tpm per minute, or rates such as 10/s, and window=DURATION for the window the gateway counts over (default: the table's, else 1m)."`
	Offer    float64          `default:"5" help:"With --gateway: send each key's requests at this multiple of its declared rate (above 1, so that the gateway is the limit)."`
	serveFlags
	cacheFlags `embed:""`

	Stdout io.Writer       `kong:"-"` // nil: os.Stdout
	Stderr io.Writer       `kong:"-"` // nil: os.Stderr
	parent context.Context // tests: cancel in place of Ctrl-C
}

// Run serves the scenario, runs the client or waits, stops the services,
// grades every client's requests per service and prints one line per
// rule. It returns an error (exit 1) when a line FAILs or the client
// command failed, else exit 4 when a line had nothing to measure (NOT
// MEASURED); Ctrl-C while a command runs stops it and exits 130 after
// printing the grades of what was seen, while without a command it is the
// way to end the wait and grade.
func (c *CheckCmd) Run() error {
	sc, err := openScenario(c.Scenario)
	if err != nil {
		return err
	}
	out, errOut := c.Stdout, c.Stderr
	if out == nil {
		out = os.Stdout
	}
	if errOut == nil {
		errOut = os.Stderr
	}
	if len(c.Command) > 0 && c.Command[0] == "--" {
		c.Command = c.Command[1:] // kong passes the separator through
	}
	if c.Gateway != "" {
		return c.runGateway(sc, out, errOut)
	}
	if _, err := c.gateway(sc); err != nil { // a bad --expect, before serving
		return err
	}
	var rec check.Recorder
	srv, services, err := c.start(sc, errOut, true, rec.Add) // /metrics as serve --metrics
	if err != nil {
		return err
	}
	fmt.Fprintf(errOut, "checking clients of %d service(s) of scenario %s\n", len(services), sc.Name)
	writeServed(errOut, sc, srv, services)

	ctx, stop := interruptibleOnce(c.parent)
	defer stop()
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if d := c.Duration.D(); d > 0 {
		runCtx, cancel = context.WithTimeout(ctx, d)
	}
	defer cancel()
	began := time.Now()
	var cmdErr error
	if len(c.Command) > 0 {
		clientOut := out
		if c.JSON {
			clientOut = errOut // keep standard output JSON
		}
		cmdErr = check.RunCommand(runCtx, c.Command, check.Environment(sc, srv), clientOut, errOut)
	} else {
		fmt.Fprintln(errOut, "waiting for clients; Ctrl-C to grade what they did")
		<-runCtx.Done()
	}
	ran := time.Since(began)
	c.drain(srv, "check", errOut, nil)

	recs, dropped := rec.Records()
	var d *decision.Result
	if len(recs) > 0 { // nothing to grade: no cap to decide
		if d, err = c.decide(ctx, sc, errOut); err != nil {
			return err
		}
	}
	report := check.Grade(sc.Name, recs, check.RulesFor(sc, d))
	if g, err := c.gateway(sc); err != nil {
		return err
	} else if g != nil {
		// The clients went through a gateway: grade what reached the
		// upstream; its answers to them check did not see (--gateway does).
		for _, l := range check.GradeGateway(g, recs, nil, ran) {
			report.Add(l)
		}
	}
	if dropped > 0 {
		report.Add(check.Line{Check: check.CheckClient, Verdict: check.Warn, Value: float64(dropped),
			Figure: fmt.Sprintf("%d requests past the first %d were not graded", dropped, check.MaxRecords),
			Rule:   "every request is graded"})
	}
	if cmdErr != nil {
		report.Add(check.Line{Check: check.CheckClient, Verdict: check.Fail, Figure: cmdErr.Error(), Rule: "the client command exits 0"})
	}
	return c.finish(ctx, sc, report, out, cmdErr)
}

// finish prints report (as text or JSON) and returns check's exit: 130
// when Ctrl-C interrupted a command or the load, 1 when a line FAILs
// (with cmdErr, the client command's error), 4 when none fails but some
// are NOT MEASURED.
func (c *CheckCmd) finish(ctx context.Context, sc *scenarios.Scenario, report *check.Report, out io.Writer, cmdErr error) error {
	var err error
	if c.JSON {
		err = report.WriteJSON(out)
	} else {
		err = report.WriteText(out)
	}
	if err != nil {
		return err
	}
	switch {
	case (len(c.Command) > 0 || c.Gateway != "") && ctx.Err() != nil:
		return codedError{errors.New("interrupted; graded what the clients did until then"), exitInterrupted}
	case report.Verdict == check.Fail:
		return codedError{errors.Join(fmt.Errorf("check %s: FAIL (%s)", sc.Name, checksOf(report, check.Fail)), cmdErr), exitFailure}
	case report.Count()[check.NotMeasured] > 0:
		return codedError{fmt.Errorf("check %s: nothing failed, but nothing to measure on %s", sc.Name, checksOf(report, check.NotMeasured)), exitNotMeasured}
	}
	return nil
}

// decide computes what simbench recommend decides for sc with its
// defaults, the cap check's in_flight rule grades by, unless the [check]
// table caps every service itself (nil then). It runs after the client
// has finished, so that its simulations take no time from the client.
func (c *CheckCmd) decide(ctx context.Context, sc *scenarios.Scenario, errOut io.Writer) (*decision.Result, error) {
	if sc.Check.AllMaxInFlight > 0 || len(sc.Check.MaxInFlight) == len(sc.Services) {
		return nil, nil
	}
	fmt.Fprintln(errOut, "deciding the cap to grade in_flight by, as simbench recommend does")
	d, err := decision.Decide(context.WithoutCancel(ctx), sc, decision.Options{
		Rule: rule(decision.DefaultMaxRateLimitedShare, decision.DefaultTolerance), Seed: c.Seed,
		Cache: c.open(errOut), NoLoad: true})
	if err != nil {
		return nil, fmt.Errorf("check %s: deciding the in-flight cap: %w", sc.Name, err)
	}
	return d, nil
}

// checksOf names the checks whose verdict was v, once each, in report
// order.
func checksOf(r *check.Report, v check.Verdict) string {
	seen := map[string]bool{}
	var s string
	for _, l := range r.Lines {
		if l.Verdict != v || seen[l.Check] {
			continue
		}
		seen[l.Check] = true
		if s != "" {
			s += ", "
		}
		s += l.Check
	}
	return s
}

// Help is the longer text of check's --help: who a client is, what a call
// is, and the rules with their defaults.
func (c *CheckCmd) Help() string {
	return `A client is a request's X-Simbench-Client header, else its API key (key:sk-...),
else "anonymous"; give each process or conversation its own header. An attempt
belongs to a call by its Idempotency-Key, else by its client, method, path and
body: it retries an open call of that identity whose last attempt failed, or
one still being served when it declares a retry (x-stainless-retry-count or
X-Simbench-Retry above 0) or declares nothing and comes 1s or more after
it (a retry after a timeout); a count of 0 declares nothing, as the openai
SDK sends it on its application's own retries. A model request begins a new round: the same
tool call in two rounds is two calls. A new Idempotency-Key is matched the
same way, so an agent's retries around its SDK's count as one call's attempts.

Lines per client and service (defaults; the scenario's [check] table changes
them): in_flight (at most the cap simbench recommend --emit sets, named with
the Little's-law arithmetic's),
rate_limited (WARN above 1%, FAIL above 10% of attempts answered 429),
early_retries (none before the delay a 429 gave), jitter (the retries after
5 or more 429s within 100ms spread over at least max(20ms, 0.1 x their median
delay, their count / the request limit)), attempts (WARN above 5, FAIL above
10 per call), cancellation (no attempt left running while its call was
retried and its connection kept open more than 250ms after the retry
arrived), attempt_timeout (with [check] attempt_timeout or the tuned
strategy's: no attempt kept open past twice it), non_retryable (no retry
of insufficient_quota, a context too long, 400, 401 or 413), writes (none overlapping, none retried without an
Idempotency-Key after a timeout, reset or 5xx) and answer_gap (p95
between model answers, WARN above 30s, FAIL above 2m). A line with nothing
to measure says NOT MEASURED and names a scenario that measures it. The
summary counts the tool calls whose result was lost (their last attempt
failed, so the model was handed an error).

With --gateway URL check grades a rate-limiting gateway in front of the
services instead of a client: it sends the requests of each key of the
scenario's [check.gateway] table through the gateway at --offer times the
declared rate, and prints per key gateway_rpm (the most requests that
reached the upstream in any window of the declared length, against the
declared rate: FAIL above max_ratio, default 1.05x), gateway_tpm (NOT
MEASURED: the upstream keeps no token counts), gateway_retry_after (the
gateway's own 429s carry a usable Retry-After) and upstream_429 (the
upstream's 429s reach the client, with their Retry-After).

Exit codes: 0 when no line fails or is NOT MEASURED, 1 when a line fails
(or the client command did), 4 when none fails but some are NOT MEASURED.

Example: simbench check tier3 -- go run ./examples/schedrunner`
}
