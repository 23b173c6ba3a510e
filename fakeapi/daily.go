package fakeapi

import (
	"time"

	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// dailyQuota enforces a service's per-day quota (spec.Daily): the requests
// and tokens admitted since the last reset, all given back at the next.
// Every tenant of the service spends the one quota.
type dailyQuota struct {
	rpd, tpd int64
	clock    spec.DayClock
	// end is the model time of the next reset; requests and tokens are
	// what the day that ends then has admitted.
	end            time.Duration
	requests, toks int64
	// started is set once end has been placed.
	started bool
}

// newDaily returns the quota d sets, or nil when it sets none; d must
// have passed validation.
func newDaily(d spec.Daily) *dailyQuota {
	if !d.Enabled() {
		return nil
	}
	c, err := d.Clock()
	if err != nil {
		panic("fakeapi: daily quota not validated: " + err.Error())
	}
	return &dailyQuota{rpd: d.RPD, tpd: d.TPD, clock: c}
}

// advance brings the quota to now: past a reset, the day's counts start
// again from 0.
func (q *dailyQuota) advance(now time.Duration) {
	if !q.started || now >= q.end {
		q.end = q.clock.NextReset(now)
		q.requests, q.toks = 0, 0
		q.started = true
	}
}

// tooLarge returns LimitTPD when tokens exceed what a whole day admits,
// else LimitNone.
func (q *dailyQuota) tooLarge(tokens int64) Limit {
	if q.tpd > 0 && tokens > q.tpd {
		return LimitTPD
	}
	return LimitNone
}

// wait returns how long after now a request of tokens would be admitted
// (0: now; otherwise the time to the next reset) and the limit that
// binds, requests before tokens. Call advance first.
func (q *dailyQuota) wait(now time.Duration, tokens int64) (time.Duration, Limit) {
	switch {
	case q.rpd > 0 && q.requests >= q.rpd:
		return q.end - now, LimitRPD
	case q.tpd > 0 && satmath.Add(q.toks, tokens) > q.tpd:
		return q.end - now, LimitTPD
	}
	return 0, LimitNone
}

// take spends one request and tokens of the day.
func (q *dailyQuota) take(tokens int64) {
	q.requests++
	q.toks = satmath.Add(q.toks, tokens)
}

// settle charges the day diff more tokens (less when negative, down to 0),
// when a request's output is settled; a request admitted in an earlier
// day settles against the current one, as providers count a day's usage
// when it is reported.
func (q *dailyQuota) settle(now time.Duration, diff int64) {
	q.advance(now)
	q.toks = max(satmath.Add(q.toks, diff), 0)
}

// state reports the quota of limit l (LimitRPD or LimitTPD) at now: the
// limit a day, what is left of it and the time to the next reset.
func (q *dailyQuota) state(now time.Duration, l Limit) Quota {
	q.advance(now)
	if l == LimitRPD {
		return Quota{Limit: q.rpd, Remaining: max(q.rpd-q.requests, 0), Reset: q.end - now}
	}
	return Quota{Limit: q.tpd, Remaining: max(q.tpd-q.toks, 0), Reset: q.end - now}
}
