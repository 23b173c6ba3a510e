package sim

import (
	"net/http"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/httptool"
	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// answerReader reads one service's decisions as a live run's client reads
// the fake server's answers: fakeapi's Decision.Answer makes the status and
// headers the server would send (rate-limit headers of the service's
// style, the API style's status), and httptool.Read reads them, the code
// httptool.Tool runs on a real answer. A virtual run's outcomes therefore
// take their class, Retry-After and quota from production code, not from a
// copy of it. Not safe for concurrent use (its header is scratch).
type answerReader struct {
	api   spec.APIStyle
	style spec.HeaderStyle
	cfg   fakeapi.ServiceConfig // the service, whose bodies readBody builds
	h     http.Header           // scratch: the answer being read
}

func newAnswerReader(cfg fakeapi.ServiceConfig) *answerReader {
	return &answerReader{api: cfg.API, style: cfg.Headers, cfg: cfg, h: http.Header{}}
}

// hasBody reports whether the body of the answer to d says more than its
// status and headers: a spent credit or a context too long (its error
// code), a 429 with its retry delay in the body (spec.Faults.RetryDelayBody).
func hasBody(d *fakeapi.Decision) bool {
	return d.Kind == fakeapi.KindQuotaExhausted || d.Kind == fakeapi.KindContextTooLong || d.RetryIn != ""
}

// read returns what a client makes of decision d, made at decided and
// answered to the client at arrived (virtual times). The body is built
// and read (httptool.ReadBody) only when it says more than the status and
// headers (hasBody); no built-in scenario's answers do. A
// success reports the decision's token count as its usage, which a live
// run's answers on the generic endpoint (/tools/…, /llm, /resources/…) do
// not carry: the estimate is exact, so the settlement changes nothing but
// the token bucket's refund floor (sched's bucket.refund of 0 tokens),
// and dropping it would move multi-agent's figures.
//
// A success, most answers by far, takes the fast path: its status and
// class come from fakeapi and httptool, and its quota from quota, which
// TestAnswerFastPath holds equal to building the headers and reading them
// (doing that for every answer costs the engine about twelve allocations
// and more than half its speed). Every other answer is built and read.
func (r *answerReader) read(d *fakeapi.Decision, decided, arrived time.Duration) answer {
	status := d.HTTPStatus(r.api)
	if class := httptool.StatusClass(status); class == sched.ClassSuccess || status == 0 {
		a := answer{class: class, status: int32(status)}
		if status != 0 {
			a.setQuota(r.quota(d, decided, arrived))
			a.tokens, a.hasUsage = d.Tokens, true
		}
		return a
	}
	return r.slow(d, decided, arrived)
}

// slow builds the answer's headers and reads them.
func (r *answerReader) slow(d *fakeapi.Decision, decided, arrived time.Duration) answer {
	clear(r.h)
	status := d.Answer(r.api, r.style, virtualEpoch.Add(decided), r.h)
	var o sched.Outcome
	if hasBody(d) {
		o = httptool.ReadBody(status, r.h, d.RejectionBody(&r.cfg, status), virtualEpoch.Add(arrived))
	} else {
		o = httptool.Read(status, r.h, virtualEpoch.Add(arrived))
	}
	a := answer{class: o.Class, status: int32(status), hasRetry: o.HasRetryAfter, retryAfter: o.RetryAfter}
	a.setQuota(o.Quota)
	if o.Class == sched.ClassSuccess {
		a.tokens, a.hasUsage = d.Tokens, true
	}
	return a
}

// quota is what httptool.Quota reads from the rate-limit headers the
// server sends with decision d, decided at virtual time decided and read
// at arrived: openai's resets are durations rounded up to the millisecond,
// anthropic's RFC 3339 times in whole seconds (the wall times virtual
// times stand for, made only for them), and of anthropic's three token
// limits the one with the fewest tokens left counts.
func (r *answerReader) quota(d *fakeapi.Decision, decidedAt, arrivedAt time.Duration) sched.ServerQuota {
	switch r.style {
	case spec.HeadersOpenAI:
		left := func(q fakeapi.Quota) sched.QuotaLeft {
			if q.Limit == 0 {
				return sched.QuotaLeft{}
			}
			return sched.QuotaLeft{Known: true, Remaining: max(q.Remaining, 0), Limit: max(q.Limit, 0), Reset: max(fakeapi.RoundUp(q.Reset, time.Millisecond), 0)}
		}
		return sched.ServerQuota{Requests: left(d.Requests), Tokens: left(d.TokenQuota)}
	case spec.HeadersAnthropic:
		decided, arrived := virtualEpoch.Add(decidedAt), virtualEpoch.Add(arrivedAt)
		left := func(q fakeapi.Quota) sched.QuotaLeft {
			if q.Limit == 0 {
				return sched.QuotaLeft{}
			}
			at := decided.Add(fakeapi.RoundUp(q.Reset, time.Second)).UTC().Truncate(time.Second)
			return sched.QuotaLeft{Known: true, Remaining: max(q.Remaining, 0), Limit: max(q.Limit, 0), Reset: max(at.Sub(arrived), 0)}
		}
		tokens := left(d.TokenQuota)
		in, out := d.TokenQuota, d.TokenQuota
		if d.InputTokenQuota.Limit > 0 {
			in = d.InputTokenQuota
		}
		if d.OutputTokenQuota.Limit > 0 {
			out = d.OutputTokenQuota
		}
		for _, q := range [...]fakeapi.Quota{in, out} {
			if l := left(q); l.Known && (!tokens.Known || l.Remaining < tokens.Remaining) {
				tokens = l
			}
		}
		return sched.ServerQuota{Requests: left(d.Requests), Tokens: tokens}
	}
	return sched.ServerQuota{}
}

// answerAt is when the answer to decision d, made at now, reaches a client
// back a network delay away: after the service's latency (for a rejection,
// the stall it waits out) and the way back.
func answerAt(d *fakeapi.Decision, now, back time.Duration) time.Duration {
	return satmath.Add(satmath.Add(now, d.Latency), back)
}

// answer is what a client read of an attempt's answer, kept in the slab
// until it arrives: an outcome without pointers, its quota's Known flags
// among its small fields (setQuota), so that it takes 72 bytes, not 88.
type answer struct {
	class    sched.Class
	hasRetry bool
	hasUsage bool
	// known holds the quota's Known flags: knownRequests, knownTokens.
	known      uint8
	status     int32
	retryAfter time.Duration
	tokens     int64
	requests   quotaLeft
	tokenQuota quotaLeft
}

// quotaLeft is a sched.QuotaLeft but for its Known flag.
type quotaLeft struct {
	remaining, limit int64
	reset            time.Duration
}

// The bits of answer.known.
const (
	knownRequests uint8 = 1 << iota
	knownTokens
)

// setQuota keeps q in a.
func (a *answer) setQuota(q sched.ServerQuota) {
	a.known = 0
	if q.Requests.Known {
		a.known |= knownRequests
	}
	if q.Tokens.Known {
		a.known |= knownTokens
	}
	a.requests = quotaLeft{q.Requests.Remaining, q.Requests.Limit, q.Requests.Reset}
	a.tokenQuota = quotaLeft{q.Tokens.Remaining, q.Tokens.Limit, q.Tokens.Reset}
}

// quota returns the quota setQuota kept.
func (a *answer) quota() sched.ServerQuota {
	return sched.ServerQuota{
		Requests: sched.QuotaLeft{Known: a.known&knownRequests != 0, Remaining: a.requests.remaining, Limit: a.requests.limit, Reset: a.requests.reset},
		Tokens:   sched.QuotaLeft{Known: a.known&knownTokens != 0, Remaining: a.tokenQuota.remaining, Limit: a.tokenQuota.limit, Reset: a.tokenQuota.reset},
	}
}

// outcome is the answer as the scheduler takes it.
func (a *answer) outcome() sched.Outcome {
	return sched.Outcome{Class: a.class, Status: int(a.status), RetryAfter: a.retryAfter, HasRetryAfter: a.hasRetry,
		Tokens: a.tokens, HasUsage: a.hasUsage, Quota: a.quota()}
}
