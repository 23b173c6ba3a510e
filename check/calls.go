package check

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/simbench/simbench/fakeapi"
)

// callHorizon is how long after an attempt's answer a repeat of it can
// still be its retry.
const callHorizon = 10 * time.Minute

// call is one logical call: its attempts in order of arrival.
type call struct {
	attempts []*fakeapi.Record
}

// callsOf groups records (one client's, to one service, in order of
// arrival) into logical calls: by Idempotency-Key, else by identity, an
// attempt joining the open call of its key when the call's last attempt
// failed, was still being served when it arrived, or it declares itself a
// retry; otherwise it starts a new call.
func callsOf(recs []*fakeapi.Record) []*call {
	var calls []*call
	open := map[string]*call{}
	for _, r := range recs {
		key := "id:" + strconv.FormatUint(r.Identity, 16)
		if r.IdempotencyKey != "" {
			key = "key:" + r.IdempotencyKey
		}
		if c := open[key]; c != nil && joins(c.attempts[len(c.attempts)-1], r) {
			c.attempts = append(c.attempts, r)
			continue
		}
		c := &call{attempts: []*fakeapi.Record{r}}
		calls = append(calls, c)
		open[key] = c
	}
	return calls
}

// joins reports whether r is a retry of last, an attempt with the same
// key.
func joins(last, r *fakeapi.Record) bool {
	switch {
	case r.Arrived-last.Answered > callHorizon:
		return false
	case r.IdempotencyKey != "", r.Attempt > 1:
		return true
	case r.Arrived < last.Answered: // last was still being served
		return true
	}
	return failed(last)
}

// failed reports whether an attempt brought its client no answer.
func failed(r *fakeapi.Record) bool {
	return r.Kind != fakeapi.KindOK || r.Cancelled || r.Wasted || r.Status/100 != 2
}

// abandoned reports whether attempt a was still running on the server,
// its client still connected, when the next attempt of its call, next,
// arrived: the client gave up on it without closing the connection.
func abandoned(a, next *fakeapi.Record) bool {
	return a.Admitted && next.Arrived < a.Answered && (a.Left == 0 || a.Left > next.Arrived)
}

// early returns how long before the delay it was told retry r of a
// 429-answered attempt prev arrived (0: not early).
func early(prev, r *fakeapi.Record) time.Duration {
	if prev.Status != 429 || !prev.HasRetryAfter {
		return 0
	}
	return max(prev.Answered+prev.RetryAfter-r.Arrived, 0)
}

// applied counts the attempts of c that wrote: writes answered with
// success, to a client still there or not.
func (c *call) applied() int {
	n := 0
	for _, a := range c.attempts {
		if a.Write && a.Kind == fakeapi.KindOK && !a.Cancelled {
			n++
		}
	}
	return n
}

// byArrival orders records by arrival, then by answer.
func byArrival(a, b *fakeapi.Record) int {
	return cmp.Or(cmp.Compare(a.Arrived, b.Arrived), cmp.Compare(a.Answered, b.Answered))
}

// sortRecords sorts records by arrival.
func sortRecords(recs []*fakeapi.Record) { slices.SortStableFunc(recs, byArrival) }
