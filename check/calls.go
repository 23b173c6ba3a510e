package check

import (
	"cmp"
	"slices"
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
// arrival) into logical calls. Attempts with one Idempotency-Key are one
// call. An attempt with no key, or with a key not seen before, is a retry
// of the earliest open call of its identity whose last attempt had failed
// by the time it arrived; failing that, when it declares itself a retry
// (Attempt above 1), of the earliest whose last attempt was still being
// served (an attempt given up without a cancel); otherwise it starts a new
// call. So parallel identical calls stay apart, each retry answers one
// failure, and the retries of an outer layer (an agent that calls its SDK
// again, which sends a new key or starts its count again) join the call
// whose inner attempts failed: nested retries count as one call's.
func callsOf(recs []*fakeapi.Record) []*call {
	var calls []*call
	keyed := map[string]*call{}
	open := map[uint64][]*call{}
	for _, r := range recs {
		k := r.IdempotencyKey
		if c := keyed[k]; k != "" && c != nil && r.Arrived-c.last().Answered <= callHorizon {
			c.attempts = append(c.attempts, r)
			continue
		}
		cs := pruneOpen(open[r.Identity], r.Arrived)
		c := retried(cs, r)
		if c != nil {
			c.attempts = append(c.attempts, r)
		} else {
			c = &call{attempts: []*fakeapi.Record{r}}
			calls, cs = append(calls, c), append(cs, c)
		}
		open[r.Identity] = cs
		if k != "" {
			keyed[k] = c
		}
	}
	return calls
}

// tries counts the layers' tries of c: the runs of its attempts that one
// inner retry loop made. A new try starts where the Idempotency-Key
// changes, or where the declared attempt number starts again at 1; so a
// call of 15 attempts from an agent's 5 tries of an SDK's 3 has 5 tries,
// the longest of 3 attempts. A call whose attempts declare neither is one
// try.
func (c *call) tries() (n, longest int) {
	n, run := 1, 0
	for i, a := range c.attempts {
		if i > 0 {
			p := c.attempts[i-1]
			if (a.IdempotencyKey != "" && a.IdempotencyKey != p.IdempotencyKey) || (a.Attempt == 1 && p.Attempt >= 1) {
				n++
				longest, run = max(longest, run), 0
			}
		}
		run++
	}
	return n, max(longest, run)
}

// last is the call's latest attempt.
func (c *call) last() *fakeapi.Record { return c.attempts[len(c.attempts)-1] }

// pruneOpen drops the calls that had ended by now: answered with success,
// or last tried longer than callHorizon ago.
func pruneOpen(cs []*call, now time.Duration) []*call {
	return slices.DeleteFunc(cs, func(c *call) bool {
		l := c.last()
		return l.Answered <= now && (!failed(l) || now-l.Answered > callHorizon)
	})
}

// retried returns the open call (of r's identity) that r retries, or nil.
func retried(cs []*call, r *fakeapi.Record) *call {
	for _, c := range cs {
		if l := c.last(); failed(l) && l.Answered <= r.Arrived {
			return c
		}
	}
	if r.Attempt > 1 {
		for _, c := range cs {
			if c.last().Answered > r.Arrived {
				return c
			}
		}
	}
	return nil
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
