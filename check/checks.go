// The checks of retries after a shared 429, cancellation, writes and the
// answer gap.

package check

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/simbench/simbench/fakeapi"
)

// minShared is the fewest retried 429s a shared 429 needs for the spread
// of its retries to mean anything: n retries jittered over a span fall
// within a fraction x of it (p10 to p90, which for n up to 9 is their
// range) with probability about n·x^(n-1): for 3 retries within a tenth,
// one time in 36, too often to call a herd; for 5, one in 2,000.
const minShared = 5

// minHerds is the fewest herds that WARN on the jitter line (see jitter).
const minHerds = 2

// jitter grades the spread of the retries after each shared 429: 429s
// answered within rules.JitterWindow of the first of them, at least
// minShared of them retried. A shared 429 whose retries spread over less
// than max(JitterMinSpread, JitterMinShare × their median delay) (see
// spreadOf) returned as a herd. FAIL when half the shared
// 429s or more did, WARN when minHerds or more did: one herd is still
// what full jitter gives by chance now and then. A shared 429 whose retries spread
// enough for their delays but not for their count (the request limit
// cannot admit so many so fast) is a herd only when capped says the
// client kept its cap: otherwise the crowd is the missing cap's doing,
// which in_flight reports, and the figure says so. NOT MEASURED without a
// shared 429.
func jitter(recs []*fakeapi.Record, calls []*call, rules Rules, capped bool) Line {
	retryOf := map[*fakeapi.Record]*fakeapi.Record{}
	for _, c := range calls {
		for i := 1; i < len(c.attempts); i++ {
			retryOf[c.attempts[i-1]] = c.attempts[i]
		}
	}
	var limited []*fakeapi.Record
	for _, r := range recs {
		if r.Status == 429 && retryOf[r] != nil {
			limited = append(limited, r)
		}
	}
	slices.SortStableFunc(limited, func(a, b *fakeapi.Record) int { return cmp.Compare(a.Answered, b.Answered) })
	l := Line{Check: CheckJitter, Verdict: Pass,
		Rule: fmt.Sprintf("the retries after a shared 429 (%d or more 429s within %v) spread, in arrival and in delay, over at least max(%v, %g × their median delay, their count ÷ the request limit), p10 to p90; FAIL when half the shared 429s or more fall short, WARN when %d do",
			minShared, rules.JitterWindow, rules.JitterMinSpread, rules.JitterMinShare, minHerds)}
	shared, herds, crowds := 0, 0, 0
	worst, worstNeed := time.Duration(-1), time.Duration(0)
	for i := 0; i < len(limited); {
		j := i
		for j < len(limited) && limited[j].Answered-limited[i].Answered <= rules.JitterWindow {
			j++
		}
		if j-i >= minShared {
			shared++
			spread, delays, need := spreadOf(limited[i:j], retryOf, rules, rules.RequestRate[limited[i].Service])
			switch {
			case spread < delays:
				herds++
			case spread < need && capped:
				herds++
			case spread < need:
				crowds++
				need = delays // the rest is in_flight's
			}
			if worst < 0 || float64(spread)/float64(need) < float64(worst)/float64(worstNeed) {
				worst, worstNeed = spread, need
			}
		}
		i = j
	}
	if shared == 0 {
		l.Verdict = NotMeasured
		l.Figure = "no shared 429s to measure; scenario retry-after-herd measures it"
		return l
	}
	l.Value = worst.Seconds()
	l.Figure = fmt.Sprintf("%d of %d shared 429s were followed by a herd; the tightest spread %s where %s was needed", herds, shared, ms(worst), ms(worstNeed))
	if crowds > 0 {
		l.Figure += fmt.Sprintf("; the retries of %d more spread enough for their delays but were too many for the request limit to admit, the missing cap's doing (see in_flight)", crowds)
	}
	switch {
	case 2*herds >= shared:
		l.Verdict = Fail
	case herds >= minHerds:
		l.Verdict = Warn
	}
	return l
}

// spreadOf returns the spread (p10 to p90) of the retries of one shared
// 429's answers, the spread their delays need (the larger of
// JitterMinSpread and JitterMinShare × their median delay) and the spread
// the rules need of them: that, or the time a request limit of rate per
// second (0: none) takes to admit them if longer. The spread is the
// smaller of that of their arrivals and that of their delays: retries at
// once keep the 429s' own spread of arrivals but all wait the same, and
// retries at the delay each was told arrive together though they waited
// differently; only jitter spreads both.
func spreadOf(group []*fakeapi.Record, retryOf map[*fakeapi.Record]*fakeapi.Record, rules Rules, rate float64) (spread, delays, need time.Duration) {
	at := make([]float64, len(group))
	delay := make([]float64, len(group))
	for k, r := range group {
		next := retryOf[r]
		at[k] = float64(next.Arrived)
		delay[k] = float64(next.Arrived - r.Answered)
	}
	slices.Sort(at)
	slices.Sort(delay)
	spread = time.Duration(min(quantile(0.9, at)-quantile(0.1, at), quantile(0.9, delay)-quantile(0.1, delay)))
	delays = max(rules.JitterMinSpread, time.Duration(rules.JitterMinShare*quantile(0.5, delay)))
	need = delays
	if rate > 0 {
		need = max(need, time.Duration(float64(len(group))/rate*float64(time.Second)))
	}
	return spread, delays, need
}

// cancellation grades whether a client's giving up reaches the server:
// an attempt whose retry arrived while the server worked on it, and whose
// connection the client kept open for longer than rules.AbandonGrace
// after it, was abandoned without a cancel (see abandoned). The figure
// adds the server-side seconds spent after the client moved on (abandoned
// attempts from their retry's arrival; attempts finished after their
// client closed the connection, from its closing) and the attempts the
// client cancelled at the transport. NOT MEASURED when the client gave up
// no attempt: none retried while served, cancelled or left.
func cancellation(calls []*call, rules Rules) Line {
	aband, cancelled, gaveUp := 0, 0, 0
	var wasted time.Duration
	for _, c := range calls {
		for i, a := range c.attempts {
			if a.Cancelled {
				cancelled++
			}
			if a.Wasted {
				wasted += a.Answered - a.Left
			}
			if a.Cancelled || a.Left > 0 {
				gaveUp++
			}
			if i+1 >= len(c.attempts) {
				continue
			}
			next := c.attempts[i+1]
			if !a.Cancelled && a.Left == 0 && next.Arrived < a.Answered {
				gaveUp++
			}
			if abandoned(a, next, rules.AbandonGrace) {
				aband++
				wasted += a.Answered - next.Arrived
			}
		}
	}
	l := Line{Check: CheckCancel, Verdict: Pass, Value: float64(aband),
		Figure: fmt.Sprintf("%d attempts abandoned while the server worked on them, %d cancelled at the transport; %.3fs of work after the client moved on", aband, cancelled, wasted.Seconds()),
		Rule:   fmt.Sprintf("at most %d attempts whose connection stayed open more than %v after their retry arrived", rules.Abandoned, rules.AbandonGrace)}
	switch {
	case aband > rules.Abandoned:
		l.Verdict = Fail
	case gaveUp == 0:
		l.Verdict = NotMeasured
		l.Figure = "the client gave up no attempt (no timeout, cancel or retry while one was served); scenario cancel measures it"
	}
	return l
}

// writes grades the client's writes: admitted while another write to the
// same resource was in flight (overlapping; not one that overlapped only
// writes its client had just closed, see letGo), or retried without an
// Idempotency-Key after an attempt whose fate the client could not know
// (a timeout, a reset or a 5xx; see uncertain), so that the server cannot
// tell the retry from a second write. The figure adds the calls the
// server applied twice (see call.applied), under one key or none: with a
// key that is the service's not deduplicating, not the client's doing.
// It reports false when there were no writes.
func writes(recs []*fakeapi.Record, calls []*call, grace time.Duration) (Line, bool) {
	n, races, own, unkeyed, twice := 0, 0, 0, 0, 0
	byResource := map[string][]*fakeapi.Record{}
	for _, r := range recs {
		if r.Write {
			n++
			byResource[r.Resource] = append(byResource[r.Resource], r)
		}
	}
	if n == 0 {
		return Line{}, false
	}
	for _, c := range calls {
		if c.applied() > 1 {
			twice++
		}
		for i, a := range c.attempts {
			if a.Write && a.WriteRace {
				if letGo(a, byResource[a.Resource], grace) {
					own++
				} else {
					races++
				}
			}
			if i > 0 && a.Write && a.IdempotencyKey == "" && uncertain(c.attempts[i-1], a) {
				unkeyed++
			}
		}
	}
	l := Line{Check: CheckWrites, Verdict: Pass, Value: float64(races + unkeyed),
		Figure: fmt.Sprintf("%d writes: %d overlapping another to the same resource, %d retried without an Idempotency-Key after a timeout, reset or 5xx; %d calls applied twice by the server",
			n, races, unkeyed, twice),
		Rule: "no write overlaps another to its resource; a write retried after an unknown outcome carries an Idempotency-Key"}
	if own > 0 {
		l.Figure += fmt.Sprintf("; %d overlapped only writes their client had just closed, the server yet to see it (within %v)", own, grace)
	}
	if races+unkeyed > 0 {
		l.Verdict = Fail
	}
	return l, true
}

// letGo reports whether write a, admitted while another write to its
// resource was in flight on the server, overlapped only writes its client
// had let go: among the client's writes to the resource (same, in order
// of arrival), each that arrived before a and was still served when a
// arrived was closed by the client, the server seeing the close within
// grace after a arrived. A client that cancels a write and sends the next
// at once has the next reach the server before its disconnect does. It
// reports false when it finds no such write (the write a overlapped was
// another client's).
func letGo(a *fakeapi.Record, same []*fakeapi.Record, grace time.Duration) bool {
	found := false
	for _, v := range same {
		if v == a || v.Arrived > a.Arrived || v.Answered <= a.Arrived {
			continue
		}
		if !v.Cancelled && v.Left == 0 || clientEnd(v)-a.Arrived > grace {
			return false
		}
		found = true
	}
	return found
}

// answerGap grades the p95 time from one model answer to the client to the
// next; it reports false when the client had fewer than two.
func answerGap(recs []*fakeapi.Record, rules Rules) (Line, bool) {
	var at []time.Duration
	for _, r := range recs {
		if r.Model && !failed(r) {
			at = append(at, r.Answered)
		}
	}
	if len(at) < 2 {
		return Line{}, false
	}
	slices.Sort(at)
	gaps := make([]float64, len(at)-1)
	for i := range gaps {
		gaps[i] = float64(at[i+1] - at[i])
	}
	slices.Sort(gaps)
	p50, p95 := time.Duration(quantile(0.5, gaps)), time.Duration(quantile(0.95, gaps))
	l := Line{Check: CheckAnswerGap, Verdict: Pass, Value: p95.Seconds(),
		Figure: fmt.Sprintf("%d model answers, %s p50 and %s p95 from one to the next", len(at), ms(p50), ms(p95)),
		Rule:   fmt.Sprintf("p95 WARN above %v, FAIL above %v", rules.AnswerGapWarn, rules.AnswerGapFail)}
	switch {
	case p95 > rules.AnswerGapFail:
		l.Verdict = Fail
	case p95 > rules.AnswerGapWarn:
		l.Verdict = Warn
	}
	return l, true
}

// refused reports whether an attempt's answer says that no retry can
// change it: the account's credit is spent (insufficient_quota), the input
// is longer than the model's context, or the request is malformed, its key
// refused or its body too large.
func refused(r *fakeapi.Record) bool {
	switch r.Kind {
	case fakeapi.KindQuotaExhausted, fakeapi.KindContextTooLong, fakeapi.KindBadRequest, fakeapi.KindUnauthorized, fakeapi.KindTooLarge:
		return true
	}
	return false
}

// nonRetryable grades the retries of answers no retry can change (see
// refused): a client that retries a spent credit or a context too long
// only spends its limits on answers it already has. NOT MEASURED when no
// attempt got such an answer.
func nonRetryable(calls []*call, rules Rules) Line {
	answers, retried := 0, 0
	kinds := map[fakeapi.Kind]int{}
	for _, c := range calls {
		for i, a := range c.attempts {
			if !refused(a) {
				continue
			}
			answers++
			if i+1 < len(c.attempts) {
				retried++
				kinds[a.Kind]++
			}
		}
	}
	l := Line{Check: CheckNonRetry, Verdict: Pass, Value: float64(retried),
		Figure: fmt.Sprintf("%d of %d answers that no retry can change were retried", retried, answers),
		Rule:   fmt.Sprintf("at most %d retries of insufficient_quota, context_length_exceeded, 400, 401 or 413 answers", rules.NonRetryable)}
	if answers == 0 {
		l.Verdict = NotMeasured
		l.Figure = "no answer that no retry can change (a spent credit, a context too long, a 400, 401 or 413); a service with credit or context_window, or a malformed request, measures it"
		return l
	}
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		l.Figure += fmt.Sprintf(", %d %s", kinds[k], k)
	}
	if retried > rules.NonRetryable {
		l.Verdict = Fail
	}
	return l
}

// attemptTimeout grades whether the client gives an attempt up at the
// per-attempt timeout rules.AttemptTimeout: an attempt it kept open (from
// its arrival to its answer, or to the client's closing it) for longer
// than twice the timeout, and at least the timeout plus
// rules.AbandonGrace, was waited on past any timeout (the slack keeps a
// loaded client's late close from counting). NOT MEASURED when no attempt
// outlasted the timeout: nothing had to be given up. It reports false when
// the rules set no timeout.
func attemptTimeout(recs []*fakeapi.Record, rules Rules) (Line, bool) {
	l := Line{Check: CheckTimeout, Verdict: Pass}
	to := rules.AttemptTimeout
	if to <= 0 {
		return l, false
	}
	bound := max(2*to, to+rules.AbandonGrace)
	l.Rule = fmt.Sprintf("no attempt kept open past %v, the attempt_timeout of %v with its slack", bound, to)
	slow, held := 0, 0
	var longest time.Duration
	for _, r := range recs {
		open := clientEnd(r) - r.Arrived
		if r.Admitted && (r.Answered-r.Arrived > to || r.Cancelled || r.Left > 0) {
			slow++
		}
		if open > bound {
			held++
		}
		longest = max(longest, open)
	}
	l.Value = float64(held)
	l.Figure = fmt.Sprintf("%d of %d attempts outlasted the timeout or were given up; %d kept open past %v, the longest %s", slow, len(recs), held, bound, ms(longest))
	switch {
	case held > 0:
		l.Verdict = Fail
	case slow == 0:
		l.Verdict = NotMeasured
		l.Figure = fmt.Sprintf("no attempt outlasted the %v timeout (the longest took %s); a service whose latency passes it measures it", to, ms(longest))
	}
	return l, true
}
