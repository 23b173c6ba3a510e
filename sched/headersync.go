package sched

// syncBuckets lowers the call's service buckets to the remaining counts the
// server reported for its attempt (ServiceConfig.HeaderSync). The server
// counted at about the attempt's start; reservations made here since then
// are taken off what it said was left.
func (c *Core) syncBuckets(cs *callState, q *ServerQuota) {
	s := cs.svc
	if s.req != nil && q.Requests.Known {
		s.req.lower(cs.runSince, float64(max(q.Requests.Remaining, 0)), cs.reqMark)
	}
	if s.tok != nil && q.Tokens.Known {
		s.tok.lower(cs.runSince, float64(max(q.Tokens.Remaining, 0)), cs.tokMark)
	}
}
