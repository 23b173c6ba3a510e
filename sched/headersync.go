package sched

import "github.com/simbench/simbench/sched/internal/bucket"

// syncBuckets lowers the call's service buckets to the remaining counts the
// server reported for its attempt (ServiceConfig.HeaderSync). The server
// counted at about the attempt's start; reservations made here since then
// are taken off what it said was left.
func (c *Core) syncBuckets(cs *callState, q *ServerQuota) {
	s := cs.svc
	if s.req != nil && q.Requests.Known {
		s.req.Lower(cs.runSince, reported(s.req, q.Requests), cs.reqMark)
	}
	if s.tok != nil && q.Tokens.Known {
		s.tok.Lower(cs.runSince, reported(s.tok, q.Tokens), cs.tokMark)
	}
}

// reported is the level a server's report puts the bucket at: no more than
// the count left, and, when the report gives the limit that count is a part
// of, no more than the same share of the bucket's capacity (a server
// publishes a bucket smaller than its limit as a share of the limit).
func reported(b *bucket.Bucket, q QuotaLeft) float64 {
	level := float64(max(q.Remaining, 0))
	if q.Limit > 0 {
		level = min(level, level/float64(q.Limit)*b.Capacity())
	}
	return level
}
