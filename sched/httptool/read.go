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
// Simulators that know what a server would send read it here, so that
// their runs take the same decisions as live ones.
//
// A status of 0 stands for an answer that never came (the connection
// closed or was reset first): ClassTransient, as Execute reports such a
// transport error, with no delay and no quota.
func Read(status int, h http.Header, arrived time.Time) sched.Outcome {
	o := sched.Outcome{Class: StatusClass(status), Status: status}
	if status == 0 {
		return o
	}
	o.Quota = Quota(h, arrived)
	if status < 200 || status >= 300 {
		o.RetryAfter, o.HasRetryAfter = RetryDelay(h, arrived)
	}
	return o
}

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
	o := Read(status, h, arrived)
	if o.Class == sched.ClassSuccess || status == 0 {
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
