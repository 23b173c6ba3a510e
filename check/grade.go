package check

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/simbench/simbench/fakeapi"
)

// Grade grades the requests in recs by rules: for every client and
// service, in name order, the lines in flight, rate limited, early
// retries, jitter, attempts and cancellation, the attempt timeout (when
// the rules set one), non-retryable answers, then writes (when there were
// any) and the answer gap (when the client asked a model); then, for
// an API key several clients share, their attempts in flight together. A log
// with no requests grades FAIL. Grade does not modify recs.
func Grade(scenario string, recs []fakeapi.Record, rules Rules) *Report {
	rep := &Report{Scenario: scenario, Verdict: Pass, Requests: len(recs)}
	if len(recs) == 0 {
		rep.add(Line{Check: CheckClient, Verdict: Fail, Figure: "no requests arrived",
			Rule: "a client must call the services; point it at the base URLs check prints and puts in its environment"})
		return rep
	}
	groups := map[[2]string][]*fakeapi.Record{}
	for i := range recs {
		k := [2]string{recs[i].Client, recs[i].Service}
		groups[k] = append(groups[k], &recs[i])
	}
	keys := make([][2]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	rounds := modelRounds(recs)
	for _, k := range keys {
		g := groups[k]
		sortRecords(g)
		calls := callsOf(g, rounds[k[0]], rules)
		for _, c := range calls {
			if a := c.attempts[0]; !a.Model && strings.HasPrefix(a.Path, "/tools/") {
				rep.ToolCalls++
				if failed(c.last()) {
					rep.LostResults++
				}
			}
		}
		for _, l := range gradeOne(g, calls, rules) {
			l.Client, l.Service = k[0], k[1]
			rep.add(l)
		}
	}
	for _, l := range sharedKeys(recs, rules) {
		rep.add(l)
	}
	return rep
}

// modelRounds returns, per client, the arrivals of its model requests to
// any service, in order: each begins a model round (see callsOf).
func modelRounds(recs []fakeapi.Record) map[string][]time.Duration {
	rounds := map[string][]time.Duration{}
	for i := range recs {
		if r := &recs[i]; r.Model {
			rounds[r.Client] = append(rounds[r.Client], r.Arrived)
		}
	}
	for _, ts := range rounds {
		slices.Sort(ts)
	}
	return rounds
}

// sharedKeys grades the attempts in flight of all the clients of one API
// key to one service together, for each key that several clients share:
// the cap is what the key's limits sustain, however many conversations or
// processes split it.
func sharedKeys(recs []fakeapi.Record, rules Rules) []Line {
	type ks struct{ key, service string }
	groups := map[ks][]*fakeapi.Record{}
	clients := map[ks]map[string]bool{}
	for i := range recs {
		r := &recs[i]
		if r.Key == "" {
			continue
		}
		k := ks{r.Key, r.Service}
		groups[k] = append(groups[k], r)
		if clients[k] == nil {
			clients[k] = map[string]bool{}
		}
		clients[k][r.Client] = true
	}
	keys := make([]ks, 0, len(groups))
	for k := range groups {
		if len(clients[k]) > 1 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b ks) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.service, b.service)) })
	var lines []Line
	for _, k := range keys {
		l := inFlight(groups[k], rules.MaxInFlight[k.service], rules.CapSource[k.service])
		l.Client, l.Service = fmt.Sprintf("key:%s (all %d clients)", k.key, len(clients[k])), k.service
		lines = append(lines, l)
	}
	return lines
}

// gradeOne grades one client's records to one service (in order of
// arrival), grouped into calls.
func gradeOne(recs []*fakeapi.Record, calls []*call, rules Rules) []Line {
	svc := recs[0].Service
	capped := inFlight(recs, rules.MaxInFlight[svc], rules.CapSource[svc])
	lines := []Line{
		capped,
		rateLimited(recs, rules),
		earlyRetries(calls, rules),
		jitter(recs, calls, rules, capped.Verdict == Pass),
		attempts(calls, rules),
		cancellation(calls, rules),
	}
	if l, ok := attemptTimeout(recs, rules); ok {
		lines = append(lines, l)
	}
	lines = append(lines, nonRetryable(calls, rules))
	if l, ok := writes(recs, calls, rules.AbandonGrace); ok {
		lines = append(lines, l)
	}
	if l, ok := answerGap(recs, rules); ok {
		lines = append(lines, l)
	}
	if rules.Daily[svc] {
		lines = append(lines, dailyQuota(recs))
	}
	return lines
}

// inFlight grades the most attempts in flight at once against limit (0:
// none). An attempt is in flight from its arrival until it was answered or
// its client closed it, whichever came first: an attempt the client let
// go is no longer its, however long the server worked on.
func inFlight(recs []*fakeapi.Record, limit int, source string) Line {
	type edge struct {
		at    time.Duration
		delta int
	}
	edges := make([]edge, 0, 2*len(recs))
	for _, r := range recs {
		edges = append(edges, edge{r.Arrived, 1}, edge{clientEnd(r), -1})
	}
	// Ends before starts at one instant: an attempt sent as another's
	// answer went out does not overlap it.
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.delta, b.delta)) })
	peak, n := 0, 0
	for _, e := range edges {
		n += e.delta
		peak = max(peak, n)
	}
	l := Line{Check: CheckInFlight, Verdict: Pass, Value: float64(peak), Figure: fmt.Sprintf("peak %d in flight", peak)}
	if limit <= 0 {
		l.Rule = "no cap: the service has no limit to plan a cap from; set [check] max_in_flight"
		if source != "" {
			l.Rule = "no cap: " + source
		}
		return l
	}
	l.Rule = fmt.Sprintf("at most %d in flight (%s)", limit, source)
	if peak > limit {
		l.Verdict = Fail
	}
	return l
}

// rateLimited grades the share of attempts answered 429.
func rateLimited(recs []*fakeapi.Record, rules Rules) Line {
	n := 0
	for _, r := range recs {
		if r.Status == 429 {
			n++
		}
	}
	share := float64(n) / float64(len(recs))
	l := Line{Check: CheckRateLimited, Verdict: Pass, Value: share,
		Figure: fmt.Sprintf("%d of %d attempts answered 429 (%s)", n, len(recs), percent(share)),
		Rule:   fmt.Sprintf("WARN above %s, FAIL above %s of attempts", percent(rules.RateLimitedWarn), percent(rules.RateLimitedFail))}
	switch {
	case share > rules.RateLimitedFail:
		l.Verdict = Fail
	case share > rules.RateLimitedWarn:
		l.Verdict = Warn
	}
	return l
}

// earlyRetries grades the retries sent before the delay a 429 gave; when
// some 429s gave it only in their body (no Retry-After header), the figure
// says how many of their retries honoured it.
func earlyRetries(calls []*call, rules Rules) Line {
	n, retries, told, inBody, inBodyEarly := 0, 0, 0, 0, 0
	var most time.Duration
	for _, c := range calls {
		for i := 1; i < len(c.attempts); i++ {
			retries++
			prev := c.attempts[i-1]
			if prev.Status == 429 && prev.HasRetryAfter {
				told++
			}
			by := early(prev, c.attempts[i])
			if by > 0 {
				n++
				most = max(most, by)
			}
			if prev.Status == 429 && prev.DelayInBody {
				inBody++
				if by > 0 {
					inBodyEarly++
				}
			}
		}
	}
	l := Line{Check: CheckEarly, Verdict: Pass, Value: float64(n),
		Figure: fmt.Sprintf("%d of %d retries sent before the retry delay the 429 gave", n, retries),
		Rule:   fmt.Sprintf("at most %d early retries", rules.EarlyRetries)}
	if told == 0 {
		l.Verdict = NotMeasured
		l.Figure = fmt.Sprintf("no retry followed a 429 that gave a retry delay (%d retries in all); scenario retry-after-herd measures it", retries)
		return l
	}
	if n > 0 {
		l.Figure += fmt.Sprintf(", the earliest %s before it", ms(most))
	}
	if inBody > 0 {
		l.Figure += fmt.Sprintf("; %d of the %d retries after a delay given only in the body (retryDelay) were early", inBodyEarly, inBody)
	}
	if n > rules.EarlyRetries {
		l.Verdict = Fail
	}
	return l
}

// attempts grades the attempts per logical call, nested retries included
// (see callsOf); when the call of the most attempts was tried by an outer
// layer more than once, the figure says how its layers multiplied.
func attempts(calls []*call, rules Rules) Line {
	total, most := 0, 0
	var worst *call
	for _, c := range calls {
		total += len(c.attempts)
		if len(c.attempts) > most {
			most, worst = len(c.attempts), c
		}
	}
	mean := float64(total) / float64(max(len(calls), 1))
	l := Line{Check: CheckAttempts, Verdict: Pass, Value: float64(most),
		Figure: fmt.Sprintf("%s took %s: %.2f per call, at most %d", plural(len(calls), "call"), plural(total, "attempt"), mean, most),
		Rule:   fmt.Sprintf("WARN above %d, FAIL above %d attempts of one call", rules.AttemptsWarn, rules.AttemptsFail)}
	if worst != nil {
		if n, longest := worst.tries(); n > 1 {
			l.Figure += fmt.Sprintf(" (nested: %d tries of up to %s each)", n, plural(longest, "attempt"))
		}
	}
	switch {
	case most > rules.AttemptsFail:
		l.Verdict = Fail
	case most > rules.AttemptsWarn:
		l.Verdict = Warn
	}
	return l
}

// plural is n and the word, with an s unless n is 1: "1 call", "3 calls".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// percent formats a share as a percentage: "1.5%".
func percent(f float64) string { return fmt.Sprintf("%.3g%%", 100*f) }

// ms formats a duration: to a hundredth of a millisecond below 10 ms
// ("0.42ms"), to the millisecond above ("1.234s").
func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
	return d.Round(time.Millisecond).String()
}

// quantile is the p-quantile of sorted xs (empirical, as gonum defines it).
func quantile(p float64, sorted []float64) float64 {
	return stat.Quantile(p, stat.Empirical, sorted, nil)
}
