package sim

import (
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/httptool"
	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// answerReader reads one service's decisions as a live run's client reads
// the fake server's answers: fakeapi's Decision.RateHeaders gives the
// rate-limit headers the server would send (of the service's style) as
// values, HTTPStatus the API style's status, and httptool.ReadValues reads
// them as httptool.Read, the code httptool.Tool runs on a real answer,
// reads them once written, without writing and parsing them. A virtual
// run's outcomes therefore take their class, Retry-After and quota from
// production code, not from a copy of it.
type answerReader struct {
	api   spec.APIStyle
	style spec.HeaderStyle
	cfg   fakeapi.ServiceConfig // the service, whose bodies read builds
}

func newAnswerReader(cfg fakeapi.ServiceConfig) *answerReader {
	return &answerReader{api: cfg.API, style: cfg.Headers, cfg: cfg}
}

// hasBody reports whether the body of the answer to d says more than its
// status and headers: a spent credit or a context too long (its error
// code), a 429 with its retry delay in the body (spec.Faults.RetryDelayBody).
func hasBody(d *fakeapi.Decision) bool {
	return d.Kind == fakeapi.KindQuotaExhausted || d.Kind == fakeapi.KindContextTooLong || d.RetryIn != ""
}

// read returns what a client makes of decision d, made at decided and
// answered to the client at arrived (virtual times). The body of an answer
// other than a success is built and read (httptool.ReadBodyValues) only
// when it says more than the status and headers (hasBody); no built-in
// scenario's answers do. A success reports the decision's token count as
// its usage, which a live run's answers on the generic endpoint (/tools/…,
// /llm, /resources/…) do not carry: the estimate is exact, so the
// settlement changes nothing but the token bucket's refund floor (sched's
// bucket.refund of 0 tokens), and dropping it would move multi-agent's
// figures.
func (r *answerReader) read(d *fakeapi.Decision, decided, arrived time.Duration) answer {
	status := d.HTTPStatus(r.api)
	v := d.RateHeaders(r.style, virtualEpoch.Add(decided))
	var o sched.Outcome
	if class := httptool.StatusClass(status); class != sched.ClassSuccess && status != 0 && hasBody(d) {
		o = httptool.ReadBodyValues(status, &v, d.RejectionBody(&r.cfg, status), virtualEpoch.Add(arrived))
	} else {
		o = httptool.ReadValues(status, &v, virtualEpoch.Add(arrived))
	}
	a := answer{class: o.Class, status: int32(status), hasRetry: o.HasRetryAfter, retryAfter: o.RetryAfter}
	a.setQuota(o.Quota)
	if o.Class == sched.ClassSuccess {
		a.tokens, a.hasUsage = d.Tokens, true
	}
	return a
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
