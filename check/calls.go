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
// by the time it arrived; failing that, of the earliest whose last attempt
// was still being served, when it declares itself a retry (Attempt above
// 1) or declares nothing and arrived at least rules.RetryGap after that
// attempt (a retry sent when a timeout gave the attempt up, cancelled or
// not); otherwise it starts a new call. A declared first attempt
// (Attempt 1) declares nothing: the count is one layer's, and the openai
// SDK with its own retries off sends x-stainless-retry-count 0 on every
// retry its application makes. So parallel identical calls stay
// apart, each retry answers one failure, and the retries of an outer layer
// (an agent that calls its SDK again, which sends a new key or starts its
// count again) join the call whose inner attempts failed: nested retries
// count as one call's. An attempt that is not a model request never joins
// a call across one of its client's model rounds: rounds holds the
// arrivals of the client's model requests (to any service), in order, and
// one that arrived between the call's last attempt and this one began a
// new round, so identical tool calls of two rounds are two calls.
func callsOf(recs []*fakeapi.Record, rounds []time.Duration, rules Rules) []*call {
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
		c := retried(cs, r, rounds, rules.RetryGap)
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

// retried returns the open call (of r's identity) that r retries, or nil
// (see callsOf).
func retried(cs []*call, r *fakeapi.Record, rounds []time.Duration, gap time.Duration) *call {
	same := func(c *call) bool { return r.Model || !newRound(rounds, c.last().Arrived, r.Arrived) }
	for _, c := range cs {
		if l := c.last(); same(c) && failed(l) && l.Answered <= r.Arrived {
			return c
		}
	}
	for _, c := range cs {
		if l := c.last(); same(c) && l.Answered > r.Arrived && (r.Attempt > 1 || r.Arrived-l.Arrived >= gap) {
			return c
		}
	}
	return nil
}

// newRound reports whether a model request arrived (rounds, sorted) after
// from and before to: a new model round began between them.
func newRound(rounds []time.Duration, from, to time.Duration) bool {
	i, _ := slices.BinarySearch(rounds, from+1)
	return i < len(rounds) && rounds[i] < to
}

// failed reports whether an attempt brought its client no answer.
func failed(r *fakeapi.Record) bool {
	return r.Kind != fakeapi.KindOK || r.Cancelled || r.Wasted || r.Status/100 != 2
}

// abandoned reports whether attempt a was abandoned by its client: its
// call's next attempt, next, arrived while the server worked on a, and
// the client kept a's connection open for longer than grace after sending
// next (to the server's own disconnect time, or to a's end when it never
// closed). A client that cancels at once and retries at once has its
// retry reach the server a little before its disconnect does: grace
// allows for that.
func abandoned(a, next *fakeapi.Record, grace time.Duration) bool {
	if !a.Admitted || next.Arrived >= a.Answered {
		return false
	}
	closed := a.Answered
	if a.Left > 0 {
		closed = a.Left
	}
	return closed-next.Arrived > grace
}

// clientEnd is when attempt r ended for its client: when it was answered,
// or when the client closed its connection before that.
func clientEnd(r *fakeapi.Record) time.Duration {
	if r.Left > 0 && r.Left < r.Answered {
		return r.Left
	}
	return r.Answered
}

// uncertain reports whether attempt a's client could not know whether the
// server applied it when it sent the next attempt of its call, next: a
// timeout (next arrived while a was served, or a was cancelled or its
// client left), a reset or hang (no status) or a 5xx.
func uncertain(a, next *fakeapi.Record) bool {
	return next.Arrived < a.Answered || a.Cancelled || a.Left > 0 || a.Status == 0 || a.Status/100 == 5
}

// early returns how long before the delay it was told retry r of a
// 429-answered attempt prev arrived (0: not early).
func early(prev, r *fakeapi.Record) time.Duration {
	if prev.Status != 429 || !prev.HasRetryAfter {
		return 0
	}
	return max(prev.Answered+prev.RetryAfter-r.Arrived, 0)
}

// applied counts the attempts of c that wrote: as serve counts them
// (Stats.WritesAppliedTwice), a write is applied once the model admits it
// to succeed, whether or not its client stays for the answer.
func (c *call) applied() int {
	n := 0
	for _, a := range c.attempts {
		if a.Write && a.Kind == fakeapi.KindOK && a.Admitted {
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
