// Gateway conformance: the rate a gateway let through to the upstream per
// API key, against the limits it declares, and what it did with 429s.

package check

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/scenarios"
)

// The checks of a gateway (Line.Check), one line each per declared key.
const (
	CheckGatewayRPM        = "gateway_rpm"
	CheckGatewayTPM        = "gateway_tpm"
	CheckGatewayRetryAfter = "gateway_retry_after"
	CheckUpstream429       = "upstream_429"
)

// Sent is one request check's load sent the gateway, and the answer it
// got back.
type Sent struct {
	// Key is the API key the request carried to the gateway.
	Key string
	// Tag is its Idempotency-Key, unique per request: the upstream's
	// record of it carries the same one when the gateway forwarded it.
	Tag string
	// Status is the status the gateway answered (0: no answer, a
	// transport error).
	Status int
	// RetryAfter and RetryAfterMs are the answer's Retry-After and
	// retry-after-ms headers ("": none).
	RetryAfter, RetryAfterMs string
	// At is when check sent it, from the start of the load.
	At time.Duration
}

// UsableRetryAfter reports whether a 429's Retry-After (delay-seconds or
// an HTTP date, RFC 9110 §10.2.3) or retry-after-ms (OpenAI's, in
// milliseconds) header tells a client how long to wait: present, a
// number not below 0 or a date.
func (s Sent) UsableRetryAfter() bool {
	if v := strings.TrimSpace(s.RetryAfterMs); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && !math.IsInf(f, 0) {
			return true
		}
	}
	v := strings.TrimSpace(s.RetryAfter)
	if v == "" {
		return false
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		return n >= 0 && !math.IsInf(n, 0)
	}
	_, err := http.ParseTime(v)
	return err == nil
}

// BusiestWindow returns the most of the sorted times ts that fall in one
// window [t, t+w), over every t: the most a limit counted over windows of
// length w saw at once, wherever its windows begin.
func BusiestWindow(ts []time.Duration, w time.Duration) int {
	most, lo := 0, 0
	for hi, t := range ts {
		for t-ts[lo] >= w {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}

// GradeGateway grades gateway g from recs, the upstream's request log
// (the requests the gateway let through), and sent, the requests check's
// load sent the gateway (nil: the load was a client's own, whose answers
// check did not see). ran is how long the load lasted. For each declared
// key, in order: the requests per minute that reached the upstream in the
// busiest window of g.Window against the declared RPM (FAIL above
// g.MaxRatio times it), the TPM (NOT MEASURED: the upstream's log keeps no
// token counts), the gateway's own 429s that carried a usable Retry-After
// (FAIL when one did not), and the upstream's 429s: whether they reached
// the client, and with their Retry-After (FAIL when the gateway dropped
// it). A request reaching the upstream belongs to the key check sent it
// with (by its Idempotency-Key), else to the key it carries there.
func GradeGateway(g *scenarios.Gateway, recs []fakeapi.Record, sent []Sent, ran time.Duration) []Line {
	byTag := make(map[string]*Sent, len(sent))
	for i := range sent {
		byTag[sent[i].Tag] = &sent[i]
	}
	arrivals := map[string][]time.Duration{}
	sentAt := map[string][]time.Duration{} // when check sent those that reached the upstream
	last := map[string]*fakeapi.Record{}   // the upstream's last answer per tag
	for i := range recs {
		r := &recs[i]
		if r.Service != g.Service {
			continue
		}
		key := r.Key
		if s := byTag[r.IdempotencyKey]; s != nil && r.IdempotencyKey != "" {
			key = s.Key
			if l := last[r.IdempotencyKey]; l == nil {
				sentAt[key] = append(sentAt[key], s.At)
			}
			if l := last[r.IdempotencyKey]; l == nil || r.Arrived >= l.Arrived {
				last[r.IdempotencyKey] = r
			}
		}
		arrivals[key] = append(arrivals[key], r.Arrived)
	}
	var lines []Line
	for _, k := range g.Keys {
		ts := arrivals[k.Key]
		slices.Sort(ts)
		who := "key:" + k.Key
		add := func(l Line) {
			l.Client, l.Service = who, g.Service
			lines = append(lines, l)
		}
		if k.RPM > 0 {
			sent := sentAt[k.Key]
			slices.Sort(sent)
			add(gatewayRPM(g, k, ts, sent, ran))
		}
		if k.TPM > 0 {
			add(Line{Check: CheckGatewayTPM, Verdict: NotMeasured,
				Figure: fmt.Sprintf("declared %s tokens/min; the upstream's request log keeps no token counts, so check cannot count the tokens let through", rateText(k.TPM)),
				Rule:   fmt.Sprintf("at most %g× the declared tokens per minute in any %v window", g.MaxRatio, g.Window)})
		}
		var own, upstream []*Sent
		for i := range sent {
			s := &sent[i]
			if s.Key != k.Key {
				continue
			}
			if r := last[s.Tag]; r == nil {
				if s.Status == http.StatusTooManyRequests {
					own = append(own, s)
				}
			} else if r.Status == http.StatusTooManyRequests {
				upstream = append(upstream, s)
			}
		}
		add(gatewayRetryAfter(own, sent == nil))
		add(upstream429(upstream, last, sent == nil))
	}
	return lines
}

// gatewayRPM grades the busiest window of key k's arrivals ts at the
// upstream against its declared RPM. When check sent the load, sent holds
// when it sent the requests that reached the upstream, and the figure
// gives their busiest window too: by the time the gateway received them,
// which its forwarding lag does not bunch.
func gatewayRPM(g *scenarios.Gateway, k scenarios.GatewayKey, ts, sent []time.Duration, ran time.Duration) Line {
	allowed := k.RPM * g.Window.Minutes()
	most := BusiestWindow(ts, g.Window)
	ratio := float64(most) / allowed
	l := Line{Check: CheckGatewayRPM, Verdict: Pass, Value: ratio,
		Figure: fmt.Sprintf("%d requests reached the upstream in the busiest %v: %s/min against the declared %s/min, %.2f×",
			most, g.Window, rateText(float64(most)/g.Window.Minutes()), rateText(k.RPM), ratio),
		Rule: fmt.Sprintf("FAIL above %g× the declared rate in any %v window (%s requests of the key: rpm × window)",
			g.MaxRatio, g.Window, rateText(allowed))}
	if len(sent) > 0 {
		n := BusiestWindow(sent, g.Window)
		l.Figure += fmt.Sprintf(" (as check sent them: %d, %.2f×)", n, float64(n)/allowed)
	}
	switch {
	case ratio > g.MaxRatio:
		l.Verdict = Fail
	case len(ts) == 0:
		l.Verdict = NotMeasured
		l.Figure = "no request of the key reached the upstream; point the gateway at the URL check prints"
	case ran < g.Window:
		l.Verdict = NotMeasured
		l.Figure += fmt.Sprintf("; the load ran %v, less than one window, so the busiest window is not a full one (a longer --duration measures it)", ran.Round(time.Millisecond))
	}
	return l
}

// blindLine is l NOT MEASURED because check did not send the load and so
// never saw the gateway's answers, only what reached the upstream.
func blindLine(l Line) Line {
	l.Verdict = NotMeasured
	l.Figure = "check saw only the upstream's side; with --gateway it sends the load itself and sees the gateway's answers"
	return l
}

// gatewayRetryAfter grades the gateway's own 429s (answered without
// reaching the upstream): every one must carry a usable Retry-After.
func gatewayRetryAfter(own []*Sent, blind bool) Line {
	l := Line{Check: CheckGatewayRetryAfter, Verdict: Pass,
		Rule: "every 429 the gateway answers itself carries a usable Retry-After (seconds or a date) or retry-after-ms"}
	if blind {
		return blindLine(l)
	}
	if len(own) == 0 {
		l.Verdict = NotMeasured
		l.Figure = "the gateway answered no 429 of its own; offer more than the declared rate (--offer) to measure it"
		return l
	}
	n := 0
	for _, s := range own {
		if s.UsableRetryAfter() {
			n++
		}
	}
	l.Value = float64(n) / float64(len(own))
	l.Figure = fmt.Sprintf("%d of the gateway's own %s carried a usable Retry-After", n, plural(len(own), "429"))
	if n < len(own) {
		l.Verdict = Fail
	}
	return l
}

// upstream429 grades what the gateway did with the upstream's 429s (the
// requests in upstream, last their upstream records by tag): a 429 with a
// Retry-After must reach the client with a usable one (FAIL when the
// gateway dropped it); one turned into another status WARNs.
func upstream429(upstream []*Sent, last map[string]*fakeapi.Record, blind bool) Line {
	l := Line{Check: CheckUpstream429, Verdict: Pass,
		Rule: "the upstream's 429s reach the client as 429s with their Retry-After (FAIL when the gateway drops it, WARN when it answers another status)"}
	if blind {
		return blindLine(l)
	}
	if len(upstream) == 0 {
		l.Verdict = NotMeasured
		l.Figure = "the upstream answered no 429; give the service a limit below the rate the gateway lets through to measure it"
		return l
	}
	told, reached, dropped, other := 0, 0, 0, 0
	for _, s := range upstream {
		hadRA := last[s.Tag].HasRetryAfter
		if hadRA {
			told++
		}
		switch {
		case s.Status != http.StatusTooManyRequests:
			other++
		case hadRA && !s.UsableRetryAfter():
			reached++
			dropped++
		default:
			reached++
		}
	}
	l.Value = float64(dropped)
	l.Figure = fmt.Sprintf("the upstream answered %s (%d with a Retry-After); %d reached the client as 429, %d of them without the upstream's Retry-After",
		plural(len(upstream), "429"), told, reached, dropped)
	if other > 0 {
		l.Figure += fmt.Sprintf("; %d came back as another status", other)
		l.Verdict = Warn
	}
	if dropped > 0 {
		l.Verdict = Fail
		l.Figure += ": the gateway drops the upstream's Retry-After"
	}
	return l
}

// rateText formats a rate or a count: whole numbers as such, others to
// three significant figures.
func rateText(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return strconv.FormatFloat(f, 'g', 3, 64)
}
