package check_test

import (
	"os"
	"time"

	"github.com/simbench/simbench/check"
	"github.com/simbench/simbench/fakeapi"
)

// Grade a log in which one call met a 429 that said to wait 50 ms and was
// retried 1 ms later.
func ExampleGrade() {
	rules := check.Rules{
		MaxInFlight: map[string]int{"api": 4}, CapSource: map[string]string{"api": "[check] max_in_flight"},
		RateLimitedWarn: check.DefaultRateLimitedWarn, RateLimitedFail: check.DefaultRateLimitedFail,
		JitterWindow: check.DefaultJitterWindow, JitterMinSpread: check.DefaultJitterMinSpread, JitterMinShare: check.DefaultJitterMinShare,
		AttemptsWarn: check.DefaultAttemptsWarn, AttemptsFail: check.DefaultAttemptsFail,
		AnswerGapWarn: check.DefaultAnswerGapWarn, AnswerGapFail: check.DefaultAnswerGapFail,
		AbandonGrace: check.DefaultAbandonGrace, RetryGap: check.DefaultRetryGap,
	}
	ms := time.Millisecond
	log := []fakeapi.Record{
		{Client: "agent-1", Service: "api", Identity: 7, Arrived: 0, Answered: 0, Status: 429, Kind: fakeapi.KindRateLimited,
			RetryAfter: 50 * ms, HasRetryAfter: true},
		{Client: "agent-1", Service: "api", Identity: 7, Arrived: 1 * ms, Answered: 300 * ms, Status: 200, Kind: fakeapi.KindOK, Admitted: true},
	}
	rep := check.Grade("example", log, rules)
	rep.WriteText(os.Stdout)
	// Output:
	// client agent-1 · service api
	//   PASS  in_flight     peak 1 in flight  (rule: at most 4 in flight ([check] max_in_flight))
	//   FAIL  rate_limited  1 of 2 attempts answered 429 (50%)  (rule: WARN above 1%, FAIL above 10% of attempts)
	//   FAIL  early_retries 1 of 1 retries sent before the retry delay the 429 gave, the earliest 49ms before it  (rule: at most 0 early retries)
	//   NOT MEASURED  jitter        no shared 429s to measure; scenario retry-after-herd measures it  (rule: the retries after a shared 429 (5 or more 429s within 100ms) spread, in arrival and in delay, over at least max(20ms, 0.1 × their median delay, their count ÷ the request limit), p10 to p90; FAIL when half the shared 429s or more fall short, WARN when 2 do)
	//   PASS  attempts      1 call took 2 attempts: 2.00 per call, at most 2  (rule: WARN above 5, FAIL above 10 attempts of one call)
	//   NOT MEASURED  cancellation  the client gave up no attempt (no timeout, cancel or retry while one was served); scenario cancel measures it  (rule: at most 0 attempts whose connection stayed open more than 250ms after their retry arrived)
	//   NOT MEASURED  non_retryable no answer that no retry can change (a spent credit, a context too long, a 400, 401 or 413); a service with credit or context_window, or a malformed request, measures it  (rule: at most 0 retries of insufficient_quota, context_length_exceeded, 400, 401 or 413 answers)
	// example: 2 requests graded, 2 PASS, 3 NOT MEASURED, 0 WARN, 2 FAIL; no tool calls
}
