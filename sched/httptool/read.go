package httptool

import (
	"net/http"
	"time"

	"github.com/simbench/simbench/sched"
)

// Read returns what an HTTP answer's status and headers h say about an
// attempt, read at arrived (the time the answer reached the client): the
// class the status alone gives (StatusClass), the status, for an answer
// other than 2xx the delay RetryDelay reads from h, and the remaining
// quota Quota reads from h. It is a pure function and the part of Execute
// that needs no body: Execute refines the class by the body's error code,
// adds the usage, the value and the error, and applies MaxRetryAfter.
// Simulators that know what a server would send read it here (or, with
// the headers as values, in ReadValues), so that their runs take the same
// decisions as live ones.
//
// A status of 0 stands for an answer that never came (the connection
// closed or was reset first): ClassTransient, as Execute reports such a
// transport error, with no delay and no quota.
func Read(status int, h http.Header, arrived time.Time) sched.Outcome {
	if status == 0 {
		return readOf(status, nil)
	}
	r := parse(h, arrived, !is2xx(status))
	return readOf(status, &r)
}

// ReadValues is Read of an answer whose rate-limit headers are v: what
// Read returns for headers h in which v.Write wrote v. It builds no
// header: a simulator whose server's answers are described by Headers
// reads them here, at a fraction of the cost of writing and reading them.
func ReadValues(status int, v *Headers, arrived time.Time) sched.Outcome {
	if status == 0 {
		return readOf(status, nil)
	}
	r := v.reading(arrived, !is2xx(status))
	return readOf(status, &r)
}

// readOf is Read's outcome for an answer with status whose headers say r
// (nil for status 0).
func readOf(status int, r *reading) sched.Outcome {
	o := sched.Outcome{Class: StatusClass(status), Status: status}
	if status == 0 {
		return o
	}
	o.Quota = r.quota()
	if !is2xx(status) {
		o.RetryAfter, o.HasRetryAfter = r.retryDelay()
	}
	return o
}

// is2xx reports whether status is a success.
func is2xx(status int) bool { return status >= 200 && status < 300 }

// StatusClass maps an HTTP status to the outcome class Execute gives it
// when the body says nothing more (see Execute: a 429 whose body says
// insufficient_quota is ClassQuotaExhausted, a 400 whose body says the
// context is too long ClassTooLarge):
//
//   - 2xx: ClassSuccess;
//   - 429: ClassRateLimited;
//   - 503 and 529: ClassOverloaded;
//   - 409: ClassConflict;
//   - 413: ClassTooLarge;
//   - 408, other 5xx, and 0 (no answer at all): ClassTransient;
//   - other statuses: ClassPermanent.
func StatusClass(status int) sched.Class {
	switch {
	case status >= 200 && status < 300:
		return sched.ClassSuccess
	case status == http.StatusTooManyRequests:
		return sched.ClassRateLimited
	case status == http.StatusServiceUnavailable || status == StatusOverloaded:
		return sched.ClassOverloaded
	case status == http.StatusConflict:
		return sched.ClassConflict
	case status == http.StatusRequestEntityTooLarge:
		return sched.ClassTooLarge
	case status == 0, status == http.StatusRequestTimeout, status >= 500 && status < 600:
		return sched.ClassTransient
	default:
		return sched.ClassPermanent
	}
}

// classify is StatusClass refined by the body of an answer other than 2xx.
func classify(status int, info *bodyInfo) sched.Class {
	switch {
	case status == http.StatusTooManyRequests && info.isQuotaExhausted():
		return sched.ClassQuotaExhausted
	case status == http.StatusBadRequest && info.isContextTooLong():
		return sched.ClassTooLarge
	}
	return StatusClass(status)
}

// ReadBody is Read refined by the body of an answer other than 2xx, as
// Execute refines it (before MaxRetryAfter): the class by the body's error
// code (insufficient_quota, context_length_exceeded, "prompt is too long"),
// Err a *StatusError with the body's code and message, the usage, and,
// when no header gives a delay, the retryDelay of a google.rpc.RetryInfo in
// the body's error.details[]. A 2xx answer, and status 0, read as Read
// reads them. It is a pure function, for simulators whose server's body
// says more than its status and headers.
func ReadBody(status int, h http.Header, body []byte, arrived time.Time) sched.Outcome {
	return withBody(Read(status, h, arrived), body)
}

// ReadBodyValues is ReadBody of an answer whose rate-limit headers are v
// (see ReadValues).
func ReadBodyValues(status int, v *Headers, body []byte, arrived time.Time) sched.Outcome {
	return withBody(ReadValues(status, v, arrived), body)
}

// withBody refines o, Read's outcome of an answer, by the answer's body as
// ReadBody does.
func withBody(o sched.Outcome, body []byte) sched.Outcome {
	if o.Class == sched.ClassSuccess || o.Status == 0 {
		return o
	}
	info := inspect(body)
	o.Tokens, o.HasUsage = info.tokens, info.hasUsage
	refine(&o, &info)
	return o
}

// refine applies what the body of an answer other than 2xx says to o.
func refine(o *sched.Outcome, info *bodyInfo) {
	o.Class = classify(o.Status, info)
	o.Err = &StatusError{Status: o.Status, Code: info.codeOrType(), Message: info.message}
	if !o.HasRetryAfter && info.hasRetryDelay {
		o.RetryAfter, o.HasRetryAfter = info.retryDelay, true
	}
}
