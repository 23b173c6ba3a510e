package check

import (
	"fmt"
	"math"
	"time"

	"github.com/simbench/simbench/fakeapi"
)

// CheckDaily names the line grading requests sent to a spent daily quota.
const CheckDaily = "daily_quota"

// DefaultDailyRetries is the most requests a client may send to a spent
// daily quota before the reset it was told of: none. The 429 of a spent
// daily quota says the quota is back only at its reset, hours away, and
// its Retry-After is the time to it: a client that comes back sooner only
// spins, meeting the same 429 for as long as it keeps trying.
const DefaultDailyRetries = 0

// dailyQuota grades the requests a client sent to a service's spent daily
// quota (records in order of arrival) after it was told the quota was
// spent and before the reset it was told of (the 429's Retry-After; on a
// service that sends none, until the quota admits a request again):
// those sent after the answer of the 429 that told it (requests already
// on their way when it came are not its doing). NOT MEASURED when no
// request met a spent quota.
func dailyQuota(recs []*fakeapi.Record) Line {
	answers, spun := 0, 0
	// told is when the client was told the quota was spent, until the
	// reset it was told of, first the first such wait.
	var told, until, first time.Duration
	open := false // a spent quota's window is open
	for _, r := range recs {
		if open && r.Arrived >= told && r.Arrived < until {
			spun++
		}
		if r.Admitted && r.Arrived >= told {
			open = false // the quota admits again: it was reset
		}
		if !r.Daily {
			continue
		}
		if !open || r.Arrived >= until {
			// A fresh refusal: the first, or one after the last reset.
			told, until, open = r.Answered, time.Duration(math.MaxInt64), true
			if r.HasRetryAfter {
				until = r.Arrived + r.RetryAfter
			}
			if answers == 0 {
				first = until - r.Arrived
			}
		}
		answers++
	}
	l := Line{Check: CheckDaily, Verdict: Pass, Value: float64(spun),
		Rule: fmt.Sprintf("at most %d requests to a spent daily quota before the reset its 429 gave (Retry-After is the time to it): give the call up, or wait", DefaultDailyRetries)}
	if answers == 0 {
		l.Verdict = NotMeasured
		l.Figure = "no request met a spent daily quota; a service whose rpd or tpd the run spends measures it"
		return l
	}
	l.Figure = fmt.Sprintf("%d requests sent to a spent daily quota before its reset, of %d answered with its 429", spun, answers)
	if first < math.MaxInt64/2 {
		l.Figure += fmt.Sprintf(" (the first told the reset was %v away)", first.Round(time.Second))
	}
	if spun > DefaultDailyRetries {
		l.Verdict = Fail
		l.Figure += "; the client keeps retrying a quota that only its reset gives back"
	}
	return l
}
