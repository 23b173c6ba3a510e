package httptool

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/simbench/simbench/sched"
)

// Headers that tell a server which call an attempt belongs to.
const (
	// IdempotencyKeyHeader carries the call's key (sched.AttemptOf), the
	// same on every attempt of one call, as Stripe's API and the IETF
	// draft "The Idempotency-Key HTTP Header Field" use it: a server can
	// tell a retry from a new request, and apply a retried write once. A
	// request whose Build set the header keeps its own.
	IdempotencyKeyHeader = "Idempotency-Key"
	// RetryCountHeader carries the retries before this attempt (0 on the
	// first), the header the official OpenAI and Anthropic SDKs send.
	RetryCountHeader = "X-Stainless-Retry-Count"
)

// markAttempt adds the attempt's headers to req: the retry count always,
// the idempotency key when ctx is a Runner's attempt and Build set none.
func markAttempt(req *http.Request, ctx context.Context, attempt int) {
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	req.Header.Set(RetryCountHeader, strconv.Itoa(max(attempt-1, 0)))
	if req.Header.Get(IdempotencyKeyHeader) != "" {
		return
	}
	if a, ok := sched.AttemptOf(ctx); ok {
		req.Header.Set(IdempotencyKeyHeader, a.Key)
	}
}

// DefaultMaxBody is the most bytes of a response body a Tool reads when
// Tool.MaxBody is zero: 1 MiB.
const DefaultMaxBody int64 = 1 << 20

// StatusOverloaded is the HTTP status Anthropic's API returns when it is
// overloaded; net/http has no name for it.
const StatusOverloaded = 529

// BuildFunc makes the HTTP request for one attempt of a call. attempt counts
// from 1. The request must carry ctx (http.NewRequestWithContext), so that
// cancelling the attempt closes the connection; a request built with
// context.Background() is given ctx by the Tool.
type BuildFunc func(ctx context.Context, call *sched.Call, attempt int) (*http.Request, error)

// DecodeFunc turns a 2xx response's status and body (at most Tool.MaxBody
// bytes) into the call's value. An error makes the outcome ClassPermanent.
type DecodeFunc func(status int, body []byte) (any, error)

// Tool runs tool calls as HTTP requests. Its Execute method has the shape of
// the scheduler's executor. The zero value is unusable: Build is required.
// A Tool is safe for concurrent use as long as its fields are not changed
// while calls run.
type Tool struct {
	// Client sends the requests (nil: http.DefaultClient). Its Timeout, if
	// any, surfaces as ClassTransient; prefer the scheduler's attempt timeout.
	Client *http.Client
	// Build makes the request for an attempt. Required.
	Build BuildFunc
	// Decode makes the value of a successful outcome (nil: the body's bytes).
	Decode DecodeFunc
	// MaxBody bounds the bytes read from a response body (0: DefaultMaxBody).
	// The Tool reads at most MaxBody+1 bytes, the extra one to detect a body
	// that is too long; a 2xx response whose body is longer than MaxBody is
	// ClassPermanent, an error response is classified on its first MaxBody
	// bytes.
	MaxBody int64
	// MaxRetryAfter is the longest server delay the Tool reports as given,
	// for retryable classes. Zero (the default) applies no limit here: the
	// outcome carries the server's delay unchanged and the scheduler's own
	// Config.MaxRetryAfter and OverMaxRetryAfter decide, which is what most
	// callers want. Set it when the Tool is used without the scheduler or
	// with a stricter limit than the scheduler's.
	MaxRetryAfter time.Duration
	// OverMax says what happens to a delay above a non-zero MaxRetryAfter:
	// sched.RetryAfterClamp (the default) reports MaxRetryAfter instead;
	// sched.RetryAfterFail makes the outcome ClassPermanent with an error
	// that wraps sched.ErrRetryAfterTooLong and states the delay, while
	// RetryAfter keeps the server's value.
	OverMax sched.OverMaxRetryAfter
	// Now reads the clock when a response arrives, to resolve HTTP-date and
	// RFC 3339 retry headers (nil: time.Now).
	Now func() time.Time
}

// Execute runs attempt number attempt (from 1) of call as an HTTP request
// made by Build with ctx, marks it (see IdempotencyKeyHeader and
// RetryCountHeader), and reports the outcome:
//
//   - 2xx: ClassSuccess with Value from Decode;
//   - 429: ClassRateLimited, or ClassQuotaExhausted when the body's error
//     code or type is insufficient_quota;
//   - 503 and 529: ClassOverloaded;
//   - 409: ClassConflict (retried after the backoff, not Retry-After);
//   - 413, and 400 whose body says context_length_exceeded (or Anthropic's
//     "prompt is too long"): ClassTooLarge;
//   - 408 and other 5xx: ClassTransient;
//   - other statuses: ClassPermanent.
//
// Status is the HTTP status. Err, for a status other than 2xx, is a
// *StatusError (wrapped, when OverMax fails the call). RetryAfter comes from
// RetryDelay on the response headers (responses other than 2xx only),
// measured from the time the response arrived, else from a Google-style
// body's error.details[] google.rpc.RetryInfo retryDelay ("13s", "1.5s";
// see ReadBody); see MaxRetryAfter for
// whether it is limited. Tokens and HasUsage come from the body's usage
// object, when the body is JSON and has one. Quota, for every response with
// a status, comes from the provider's remaining/reset headers (see Quota).
//
// Transport errors (connection reset, EOF, refused, a client timeout) are
// ClassTransient, except certificate errors, which are ClassPermanent. If
// ctx is cancelled before or during the attempt the outcome is
// ClassCancelled with Err set to ctx.Err(); if ctx's deadline passes it is
// ClassTransient (an attempt timeout) with an Err that matches
// context.DeadlineExceeded. The response body is always closed; a body not
// read to its end makes net/http close the connection rather than reuse it.
//
// Execute panics if Build is nil.
func (t *Tool) Execute(ctx context.Context, call *sched.Call, attempt int) sched.Outcome {
	if t.Build == nil {
		panic("httptool: Tool.Build is nil")
	}
	if err := ctx.Err(); err != nil {
		return contextOutcome(err, err)
	}
	req, err := t.Build(ctx, call, attempt)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return contextOutcome(cerr, err)
		}
		return sched.Failed(sched.ClassPermanent, fmt.Errorf("httptool: build request for call %q: %w", call.ID, err))
	}
	if req.Context() == context.Background() {
		req = req.WithContext(ctx)
	}
	markAttempt(req, ctx, attempt)
	resp, err := t.client().Do(req)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return contextOutcome(cerr, err)
		}
		return transportOutcome(err)
	}
	defer resp.Body.Close()
	arrived := t.now()
	limit := t.maxBody()
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, saturatingInc(limit)))
	tooLong := int64(len(body)) > limit
	if tooLong {
		body = body[:limit]
	}
	if readErr != nil {
		if cerr := ctx.Err(); cerr != nil {
			o := contextOutcome(cerr, readErr)
			o.Status = resp.StatusCode
			return o
		}
	}
	o := Read(resp.StatusCode, resp.Header, arrived)
	info := inspect(body)
	o.Tokens, o.HasUsage = info.tokens, info.hasUsage
	if o.Class == sched.ClassSuccess {
		return t.success(o, body, tooLong, readErr)
	}
	refine(&o, &info)
	if o.HasRetryAfter {
		t.limitRetryAfter(&o)
	}
	return o
}

// success completes the outcome of a 2xx response.
func (t *Tool) success(o sched.Outcome, body []byte, tooLong bool, readErr error) sched.Outcome {
	switch {
	case readErr != nil:
		o.Class = sched.ClassTransient
		o.Err = fmt.Errorf("httptool: HTTP %d: read body: %w", o.Status, readErr)
	case tooLong:
		o.Class = sched.ClassPermanent
		o.Err = fmt.Errorf("httptool: HTTP %d: response body longer than %d bytes", o.Status, t.maxBody())
	case t.Decode == nil:
		o.Value = body
	default:
		v, err := t.Decode(o.Status, body)
		if err != nil {
			o.Class = sched.ClassPermanent
			o.Err = fmt.Errorf("httptool: HTTP %d: decode response: %w", o.Status, err)
			break
		}
		o.Value = v
	}
	if o.Err != nil {
		o.Value = nil
	}
	return o
}

// limitRetryAfter applies MaxRetryAfter and OverMax to a retryable outcome.
func (t *Tool) limitRetryAfter(o *sched.Outcome) {
	if t.MaxRetryAfter <= 0 || o.RetryAfter <= t.MaxRetryAfter || !o.Class.Retryable() {
		return
	}
	if t.OverMax == sched.RetryAfterFail {
		o.Class = sched.ClassPermanent
		o.Err = fmt.Errorf("%w: server asked for %v, maximum %v: %w", sched.ErrRetryAfterTooLong, o.RetryAfter, t.MaxRetryAfter, o.Err)
		return
	}
	o.RetryAfter = t.MaxRetryAfter
}

// contextOutcome reports an attempt ended by its context: cancellation is
// ClassCancelled with ctxErr itself, a passed deadline is an attempt timeout.
func contextOutcome(ctxErr, err error) sched.Outcome {
	if errors.Is(ctxErr, context.Canceled) {
		return sched.Failed(sched.ClassCancelled, ctxErr)
	}
	if !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w: %w", ctxErr, err)
	}
	return sched.Failed(sched.ClassTransient, fmt.Errorf("httptool: attempt timed out: %w", err))
}

// transportOutcome classifies an error from the client with a live context.
func transportOutcome(err error) sched.Outcome {
	var (
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
	)
	if errors.As(err, &verify) || errors.As(err, &authority) || errors.As(err, &hostname) || errors.As(err, &invalid) {
		return sched.Failed(sched.ClassPermanent, fmt.Errorf("httptool: %w", err))
	}
	return sched.Failed(StatusClass(0), fmt.Errorf("httptool: %w", err))
}

func (t *Tool) client() *http.Client {
	if t.Client == nil {
		return http.DefaultClient
	}
	return t.Client
}

func (t *Tool) maxBody() int64 {
	if t.MaxBody <= 0 {
		return DefaultMaxBody
	}
	return t.MaxBody
}

func (t *Tool) now() time.Time {
	if t.Now == nil {
		return time.Now()
	}
	return t.Now()
}

func saturatingInc(n int64) int64 {
	if n == math.MaxInt64 {
		return n
	}
	return n + 1
}

// PostJSON returns a BuildFunc that POSTs each call's Payload to url as JSON,
// with header's fields added (header may be nil). A Payload of type []byte
// or json.RawMessage is sent as is; anything else is encoded with
// encoding/json, and an encoding error fails the call as ClassPermanent.
func PostJSON(url string, header http.Header) BuildFunc {
	return func(ctx context.Context, call *sched.Call, _ int) (*http.Request, error) {
		var body []byte
		switch p := call.Payload.(type) {
		case []byte:
			body = p
		case json.RawMessage:
			body = p
		default:
			b, err := json.Marshal(p)
			if err != nil {
				return nil, err
			}
			body = b
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		for k, vs := range header {
			req.Header[k] = append(req.Header[k], vs...)
		}
		req.Header.Set("Content-Type", "application/json")
		return req, nil
	}
}
