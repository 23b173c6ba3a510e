package check

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/scenarios"
)

// busiestBrute is BusiestWindow by its definition: the most times in
// [t, t+w) over every t, where only the times themselves need trying as t
// (moving a window's start up to its first time loses none).
func busiestBrute(ts []time.Duration, w time.Duration) int {
	most := 0
	for _, t := range ts {
		n := 0
		for _, u := range ts {
			if u >= t && u < t+w {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func TestBusiestWindowMatchesItsDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 1))
	for range 200 {
		ts := make([]time.Duration, rng.IntN(60))
		for i := range ts {
			ts[i] = time.Duration(rng.IntN(5000)) * time.Millisecond
		}
		slices.Sort(ts)
		w := time.Duration(1+rng.IntN(1500)) * time.Millisecond
		if got, want := BusiestWindow(ts, w), busiestBrute(ts, w); got != want {
			t.Fatalf("BusiestWindow(%v, %v) = %d, want %d", ts, w, got, want)
		}
	}
}

// gatewayOf is a gateway promising rpm for key sk-a on service api over
// window w.
func gatewayOf(rpm float64, w time.Duration) *scenarios.Gateway {
	return &scenarios.Gateway{Service: "api", Window: w, MaxRatio: 1.05, Keys: []scenarios.GatewayKey{{Key: "sk-a", RPM: rpm}}}
}

// lineOf returns the line of check c.
func lineOf(t *testing.T, lines []Line, c string) Line {
	t.Helper()
	for _, l := range lines {
		if l.Check == c {
			return l
		}
	}
	t.Fatalf("no %s line in %+v", c, lines)
	return Line{}
}

// TestGatewayRPMReplicas lets n replicas each admit one request every
// 50 ms (20/s, the declared 1200/min) with offsets of their own, for 10 s:
// a 2 s window holds 40 of each replica's (exactly: its starts at one of
// them and ends before the 41st), so the ratio is n.
func TestGatewayRPMReplicas(t *testing.T) {
	for _, n := range []int{1, 3} {
		var recs []fakeapi.Record
		var sent []Sent
		for r := range n {
			for i := range 200 {
				tag := string(rune('a'+r)) + "-" + strings.Repeat("x", i%7) + time.Duration(i).String()
				at := time.Duration(r)*7*time.Millisecond + time.Duration(i)*50*time.Millisecond
				recs = append(recs, fakeapi.Record{Service: "api", Key: "sk-upstream", IdempotencyKey: tag, Status: 200, Arrived: at + time.Millisecond})
				// check sent them at twice the pace the gateway let them through
				sent = append(sent, Sent{Key: "sk-a", Tag: tag, Status: 200, At: at / 2})
			}
		}
		l := lineOf(t, GradeGateway(gatewayOf(1200, 2*time.Second), recs, sent, 10*time.Second), CheckGatewayRPM)
		want := Pass
		if n > 1 {
			want = Fail
		}
		if asSent := fmt.Sprintf("(as check sent them: %d, %d.00×)", 80*n, 2*n); !strings.HasSuffix(l.Figure, asSent) {
			t.Errorf("%d replicas: %q; want it to end %q (twice the requests in a window of the times check sent them)", n, l.Figure, asSent)
		}
		if l.Value != float64(n) || l.Verdict != want || l.Client != "key:sk-a" {
			t.Errorf("%d replicas: %+v; want ratio %d (%d of the 40 requests a 2s window allows), %s, by the key sent (not the upstream's)", n, l, n, 40*n, want)
		}
	}
}

func TestGatewayRPMShortRunIsNotMeasured(t *testing.T) {
	recs := []fakeapi.Record{{Service: "api", Key: "sk-a", Arrived: 0}}
	l := lineOf(t, GradeGateway(gatewayOf(60, time.Minute), recs, nil, 10*time.Second), CheckGatewayRPM)
	if l.Verdict != NotMeasured {
		t.Errorf("a run shorter than the window: %+v; want NOT MEASURED", l)
	}
	// Over the limit already within the short run: a real breach.
	for i := range 3 {
		recs = append(recs, fakeapi.Record{Service: "api", Key: "sk-a", Arrived: time.Duration(i+1) * time.Second})
	}
	l = lineOf(t, GradeGateway(gatewayOf(2, time.Minute), recs, nil, 10*time.Second), CheckGatewayRPM)
	if l.Verdict != Fail || l.Value != 2 {
		t.Errorf("4 requests where 2 per minute were declared: %+v; want FAIL at 2×", l)
	}
}

// TestGateway429s: two 429s of the gateway's own (one with Retry-After,
// one without), and three of the upstream's with a Retry-After: one kept,
// one dropped, one answered 502.
func TestGateway429s(t *testing.T) {
	up := func(tag string) fakeapi.Record {
		return fakeapi.Record{Service: "api", Key: "sk-a", IdempotencyKey: tag, Status: 429, HasRetryAfter: true, RetryAfter: time.Second}
	}
	recs := []fakeapi.Record{up("u1"), up("u2"), up("u3")}
	sent := []Sent{
		{Key: "sk-a", Tag: "g1", Status: 429, RetryAfter: "1"},
		{Key: "sk-a", Tag: "g2", Status: 429},
		{Key: "sk-a", Tag: "u1", Status: 429, RetryAfterMs: "1000"},
		{Key: "sk-a", Tag: "u2", Status: 429},
		{Key: "sk-a", Tag: "u3", Status: http.StatusBadGateway},
	}
	lines := GradeGateway(gatewayOf(600, time.Second), recs, sent, time.Minute)
	if l := lineOf(t, lines, CheckGatewayRetryAfter); l.Verdict != Fail || l.Value != 0.5 || !strings.HasPrefix(l.Figure, "1 of the gateway's own 2 429s") {
		t.Errorf("own 429s: %+v; want FAIL, 1 of 2", l)
	}
	l := lineOf(t, lines, CheckUpstream429)
	if l.Verdict != Fail || l.Value != 1 || !strings.Contains(l.Figure, "3 429s (3 with a Retry-After); 2 reached the client as 429, 1 of them without") ||
		!strings.Contains(l.Figure, "1 came back as another status") || !strings.Contains(l.Figure, "drops the upstream's Retry-After") {
		t.Errorf("upstream 429s: %+v; want FAIL naming the dropped Retry-After", l)
	}
	// Without the dropped one, the 502 alone WARNs.
	sent[3].RetryAfter = "Wed, 21 Oct 2015 07:28:00 GMT"
	if l := lineOf(t, GradeGateway(gatewayOf(600, time.Second), recs, sent, time.Minute), CheckUpstream429); l.Verdict != Warn {
		t.Errorf("upstream 429s with an HTTP-date Retry-After and a 502: %+v; want WARN", l)
	}
	// Check sent nothing: it cannot see the gateway's answers.
	for _, c := range []string{CheckGatewayRetryAfter, CheckUpstream429} {
		if l := lineOf(t, GradeGateway(gatewayOf(600, time.Second), recs, nil, time.Minute), c); l.Verdict != NotMeasured {
			t.Errorf("%s without check's own load: %+v; want NOT MEASURED", c, l)
		}
	}
}

func TestUsableRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		s    Sent
		want bool
	}{
		{Sent{RetryAfter: "2"}, true},
		{Sent{RetryAfter: "0"}, true},
		{Sent{RetryAfter: " 1.5 "}, true},
		{Sent{RetryAfter: "-1"}, false},
		{Sent{RetryAfter: "soon"}, false},
		{Sent{RetryAfter: "Wed, 21 Oct 2015 07:28:00 GMT"}, true},
		{Sent{RetryAfterMs: "250"}, true},
		{Sent{RetryAfterMs: "x", RetryAfter: ""}, false},
		{Sent{}, false},
	} {
		if got := tt.s.UsableRetryAfter(); got != tt.want {
			t.Errorf("%+v: usable = %v, want %v", tt.s, got, tt.want)
		}
	}
}
