package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/scenarios"
)

const ms1 = time.Millisecond

// ok is a successful attempt of identity id from at to end (ms).
func ok(id uint64, at, end int) fakeapi.Record {
	return fakeapi.Record{Client: "c", Service: "s", Identity: id, Arrived: time.Duration(at) * ms1, Answered: time.Duration(end) * ms1,
		Status: 200, Kind: fakeapi.KindOK, Admitted: true}
}

// limited is a 429 of identity id at ms at, told to wait wait ms.
func limited(id uint64, at, wait int) fakeapi.Record {
	return fakeapi.Record{Client: "c", Service: "s", Identity: id, Arrived: time.Duration(at) * ms1, Answered: time.Duration(at) * ms1,
		Status: 429, Kind: fakeapi.KindRateLimited, RetryAfter: time.Duration(wait) * ms1, HasRetryAfter: true}
}

// testRules are the defaults with a cap of 2 on service s.
func testRules() Rules {
	return Rules{
		MaxInFlight: map[string]int{"s": 2}, CapSource: map[string]string{"s": "test"}, RequestRate: map[string]float64{},
		RateLimitedWarn: DefaultRateLimitedWarn, RateLimitedFail: DefaultRateLimitedFail,
		JitterWindow: DefaultJitterWindow, JitterMinSpread: DefaultJitterMinSpread, JitterMinShare: DefaultJitterMinShare,
		AttemptsWarn: DefaultAttemptsWarn, AttemptsFail: DefaultAttemptsFail,
		AnswerGapWarn: DefaultAnswerGapWarn, AnswerGapFail: DefaultAnswerGapFail,
		AbandonGrace: DefaultAbandonGrace, RetryGap: DefaultRetryGap,
	}
}

// gradeOf grades recs and returns the line of the named check.
func gradeOf(t *testing.T, recs []fakeapi.Record, name string) Line {
	t.Helper()
	for _, l := range Grade("test", recs, testRules()).Lines {
		if l.Check == name {
			return l
		}
	}
	t.Fatalf("no %s line", name)
	return Line{}
}

func TestGradeLines(t *testing.T) {
	write := func(r fakeapi.Record) fakeapi.Record { r.Write, r.Resource = true, "doc"; return r }
	race := write(ok(2, 5, 15))
	race.WriteRace = true
	model := func(r fakeapi.Record) fakeapi.Record { r.Model = true; return r }
	retry := func(r fakeapi.Record) fakeapi.Record { r.Attempt = 2; return r }
	tests := []struct {
		name  string
		give  []fakeapi.Record
		check string
		want  Verdict
		value float64
	}{
		// Two at once meet the cap of 2; an attempt that starts as another
		// ends does not overlap it.
		{"two in flight", []fakeapi.Record{ok(1, 0, 10), ok(2, 5, 15), ok(3, 10, 20)}, CheckInFlight, Pass, 2},
		{"three in flight", []fakeapi.Record{ok(1, 0, 10), ok(2, 5, 15), ok(3, 9, 20)}, CheckInFlight, Fail, 3},
		// The retry comes 2 ms after a 429 that said 5 ms: early.
		{"early retry", []fakeapi.Record{limited(1, 0, 5), ok(1, 2, 10)}, CheckEarly, Fail, 1},
		{"retry on time", []fakeapi.Record{limited(1, 0, 5), ok(1, 5, 10)}, CheckEarly, Pass, 0},
		// A 2xx ends the call: the same request again is a new call.
		{"repeat after success", []fakeapi.Record{ok(1, 0, 10), ok(1, 20, 30)}, CheckAttempts, Pass, 1},
		{"eleven attempts", append(repeat(limited(1, 0, 0), 10), ok(1, 50, 60)), CheckAttempts, Fail, 11},
		{"six attempts", append(repeat(limited(1, 0, 0), 5), ok(1, 50, 60)), CheckAttempts, Warn, 6},
		// One 429 in two attempts is a share of 0.5.
		{"rate limited", []fakeapi.Record{limited(1, 0, 5), ok(1, 5, 10)}, CheckRateLimited, Fail, 0.5},
		// The declared retry arrived while the first attempt was still
		// served and its client still connected: abandoned. The same
		// request undeclared is a call of its own, in parallel.
		{"abandoned", []fakeapi.Record{ok(1, 0, 1000), retry(ok(1, 500, 600))}, CheckCancel, Fail, 1},
		{"parallel identical", []fakeapi.Record{ok(1, 0, 100), ok(1, 1, 100), ok(1, 2, 100)}, CheckAttempts, Pass, 1},
		{"cancelled then retried", []fakeapi.Record{cancelled(ok(1, 0, 40)), ok(1, 50, 60)}, CheckCancel, Pass, 0},
		{"write retried without a key", []fakeapi.Record{write(ok(1, 0, 100)), retry(write(ok(1, 50, 60)))}, CheckWrites, Fail, 1},
		{"overlapping writes", []fakeapi.Record{write(ok(1, 0, 10)), race}, CheckWrites, Fail, 1},
		{"writes in turn", []fakeapi.Record{write(ok(1, 0, 10)), write(ok(2, 10, 20))}, CheckWrites, Pass, 0},
		// Answers 10 s apart meet a 30 s bound; 40 s apart pass it.
		{"answers", []fakeapi.Record{model(ok(1, 0, 10_000)), model(ok(2, 10_000, 20_000))}, CheckAnswerGap, Pass, 10},
		{"slow answers", []fakeapi.Record{model(ok(1, 0, 10_000)), model(ok(2, 10_000, 50_000))}, CheckAnswerGap, Warn, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := gradeOf(t, tt.give, tt.check)
			if l.Verdict != tt.want || l.Value != tt.value {
				t.Errorf("%s %v (%s), want %s %v", l.Verdict, l.Value, l.Figure, tt.want, tt.value)
			}
		})
	}
}

// repeat returns n attempts like r, 1 ms apart.
func repeat(r fakeapi.Record, n int) []fakeapi.Record {
	out := make([]fakeapi.Record, n)
	for i := range out {
		out[i] = r
		out[i].Arrived += time.Duration(i) * ms1
		out[i].Answered += time.Duration(i) * ms1
	}
	return out
}

// cancelled makes r an attempt its client cancelled at its end.
func cancelled(r fakeapi.Record) fakeapi.Record {
	r.Cancelled, r.Left, r.Kind, r.Status = true, r.Answered, fakeapi.KindOK, 0
	return r
}

func TestJitterTellsAHerdFromSpreadRetries(t *testing.T) {
	// Five calls meet 429s within 4 ms, told to wait 100 ms.
	shared := func(retry func(i int) int) []fakeapi.Record {
		var recs []fakeapi.Record
		for i := range 5 {
			recs = append(recs, limited(uint64(i), i, 100), ok(uint64(i), retry(i), retry(i)+10))
		}
		return recs
	}
	tests := []struct {
		name  string
		retry func(i int) int // when call i retries (ms)
		want  Verdict
	}{
		{"at once", func(i int) int { return i + 1 }, Fail},
		{"all at the delay", func(int) int { return 103 }, Fail},
		{"full jitter", func(i int) int { return 100 + 150*i }, Pass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := gradeOf(t, shared(tt.retry), CheckJitter)
			if l.Verdict != tt.want {
				t.Errorf("%s (%s), want %s", l.Verdict, l.Figure, tt.want)
			}
		})
	}
}

func TestGradeSharedKeyInFlight(t *testing.T) {
	// Three clients on one key, one attempt each at once: each is within
	// the cap of 2, the key is not.
	var recs []fakeapi.Record
	for i, c := range []string{"a", "b", "c"} {
		r := ok(uint64(i), 0, 10)
		r.Client, r.Key = c, "sk-1"
		recs = append(recs, r)
	}
	rep := Grade("x", recs, testRules())
	last := rep.Lines[len(rep.Lines)-1]
	if last.Client != "key:sk-1 (all 3 clients)" || last.Check != CheckInFlight || last.Verdict != Fail || last.Value != 3 {
		t.Errorf("last line %+v, want the key's 3 in flight failing the cap of 2", last)
	}
}

func TestGradeWithoutRequestsFails(t *testing.T) {
	rep := Grade("x", nil, testRules())
	if rep.Verdict != Fail || len(rep.Lines) != 1 || rep.Lines[0].Check != CheckClient {
		t.Fatalf("%+v", rep)
	}
}

func TestGradeSplitsClientsAndIdempotencyKeys(t *testing.T) {
	a, b := ok(1, 0, 10), ok(1, 0, 10)
	b.Client = "d"
	// Different bodies, one Idempotency-Key: one call of two attempts.
	k1, k2 := limited(1, 20, 0), ok(2, 21, 30)
	k1.IdempotencyKey, k2.IdempotencyKey = "k", "k"
	rep := Grade("x", []fakeapi.Record{a, b, k1, k2}, testRules())
	var clients []string
	for _, l := range rep.Lines {
		if l.Check == CheckAttempts {
			clients = append(clients, l.Client+":"+l.Figure)
		}
	}
	want := []string{"c:2 calls took 3 attempts: 1.50 per call, at most 2", "d:1 call took 1 attempt: 1.00 per call, at most 1"}
	if strings.Join(clients, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", clients, want)
	}
}

func TestRulesForTakesTheCheckTable(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	r := RulesFor(sc, nil)
	// Without a decision: the Little's-law cap at bounded-64's headroom.
	plans, _ := decision.PlanServices(sc, sc.Strategy("bounded-64").Headroom)
	if len(plans) != 1 || r.MaxInFlight["openai"] != plans[0].MaxInFlight || r.EarlyRetries != DefaultEarlyRetries || r.JitterWindow != DefaultJitterWindow {
		t.Errorf("tier3's rules: %+v, want the cap of %+v", r, plans)
	}
	src, err := os.ReadFile("../scenarios/tier3.toml")
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, "\n[check]\nmax_in_flight = { openai = 8 }\nearly_retries = 2\njitter_min_spread = \"50ms\"\nattempts_fail = 4\nattempt_timeout = \"1500ms\"\n"...)
	sc, err = scenarios.Parse("tier3.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	r = RulesFor(sc, nil)
	if r.MaxInFlight["openai"] != 8 || r.EarlyRetries != 2 || r.JitterMinSpread != 50*ms1 || r.AttemptsFail != 4 || r.AttemptsWarn != 4 || r.AttemptTimeout != 1500*ms1 {
		t.Errorf("rules with [check]: %+v", r)
	}
}

func TestCheckTableProblemsNameTheKey(t *testing.T) {
	src, err := os.ReadFile("../scenarios/tier3.toml")
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, "\n[check]\nmax_in_flight = { nosuch = 8 }\nattempts_warn = 9\nattempts_fail = 3\njiter_window = \"1s\"\n"...)
	_, err = scenarios.Parse("tier3.toml", src)
	for _, want := range []string{"check.max_in_flight.nosuch", "unknown service", "check.attempts_warn", "check.jiter_window", `did you mean "jitter_window"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

func TestReportWritesTextAndJSON(t *testing.T) {
	rep := Grade("x", []fakeapi.Record{ok(1, 0, 10)}, testRules())
	var text, js bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "client c · service s\n  PASS  in_flight     peak 1 in flight  (rule: at most 2 in flight (test))") {
		t.Errorf("text:\n%s", text.String())
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Verdict != NotMeasured || len(back.Lines) != len(rep.Lines) {
		t.Errorf("JSON round trip: %v %+v", err, back)
	}
}

// overloaded is a 503 of identity id at ms at that declares attempt n.
func overloaded(id uint64, at, n int) fakeapi.Record {
	return fakeapi.Record{Client: "c", Service: "s", Identity: id, Arrived: time.Duration(at) * ms1, Answered: time.Duration(at) * ms1,
		Status: 503, Kind: fakeapi.KindOverloaded, Attempt: n}
}

// refusal is an answer of kind k and status at ms at that no retry changes.
func refusal(id uint64, at int, k fakeapi.Kind, status int) fakeapi.Record {
	return fakeapi.Record{Client: "c", Service: "s", Identity: id, Arrived: time.Duration(at) * ms1, Answered: time.Duration(at) * ms1,
		Status: status, Kind: k}
}

func TestGradeNestedRetriesAndRefusals(t *testing.T) {
	keyed := func(r fakeapi.Record, k string) fakeapi.Record { r.IdempotencyKey = k; return r }
	inBody := func(r fakeapi.Record) fakeapi.Record { r.DelayInBody = true; return r }
	declared := func(r fakeapi.Record, n int) fakeapi.Record { r.Attempt = n; return r }
	tests := []struct {
		name   string
		give   []fakeapi.Record
		check  string
		want   Verdict
		figure string
	}{
		// An agent's 2 tries of an SDK's 3 attempts (x-stainless-retry-count
		// 0, 1, 2, then 0 again): one call of 6.
		{"declared tries", []fakeapi.Record{overloaded(1, 0, 1), overloaded(1, 1, 2), overloaded(1, 2, 3),
			overloaded(1, 10, 1), overloaded(1, 11, 2), declared(ok(1, 12, 20), 3)},
			CheckAttempts, Warn, "1 call took 6 attempts: 6.00 per call, at most 6 (nested: 2 tries of up to 3 attempts each)"},
		// An SDK keeps its key across its own retries; the agent's retry
		// of the same request is a new SDK call with a new key.
		{"keys per try", []fakeapi.Record{keyed(limited(1, 0, 0), "a"), keyed(limited(1, 1, 0), "a"), keyed(ok(1, 2, 9), "b")},
			CheckAttempts, Pass, "1 call took 3 attempts: 3.00 per call, at most 3 (nested: 2 tries of up to 2 attempts each)"},
		// Without a key or a declared count the layers are not told apart.
		{"undeclared", []fakeapi.Record{limited(1, 0, 0), limited(1, 1, 0), ok(1, 2, 9)},
			CheckAttempts, Pass, "1 call took 3 attempts: 3.00 per call, at most 3"},
		// A spent credit retried twice, then given up; a context too long
		// not retried.
		{"credit retried", []fakeapi.Record{refusal(1, 0, fakeapi.KindQuotaExhausted, 429), refusal(1, 1, fakeapi.KindQuotaExhausted, 429),
			refusal(1, 2, fakeapi.KindQuotaExhausted, 429), refusal(2, 3, fakeapi.KindContextTooLong, 400)},
			CheckNonRetry, Fail, "2 of 4 answers that no retry can change were retried, 2 insufficient_quota"},
		{"context retried", []fakeapi.Record{refusal(2, 0, fakeapi.KindContextTooLong, 400), refusal(2, 5, fakeapi.KindContextTooLong, 400)},
			CheckNonRetry, Fail, "1 of 2 answers that no retry can change were retried, 1 context_length_exceeded"},
		{"credit given up", []fakeapi.Record{refusal(1, 0, fakeapi.KindQuotaExhausted, 429), ok(2, 1, 5)},
			CheckNonRetry, Pass, "0 of 1 answers that no retry can change were retried"},
		// A 429 that gave its 5 ms only in the body: retried after 2 ms
		// (early), or after 5 ms (honoured).
		{"body delay ignored", []fakeapi.Record{inBody(limited(1, 0, 5)), ok(1, 2, 10)},
			CheckEarly, Fail, "1 of 1 retries sent before the retry delay the 429 gave, the earliest 3.00ms before it; 1 of the 1 retries after a delay given only in the body (retryDelay) were early"},
		{"body delay honoured", []fakeapi.Record{inBody(limited(1, 0, 5)), ok(1, 5, 10)},
			CheckEarly, Pass, "0 of 1 retries sent before the retry delay the 429 gave; 0 of the 1 retries after a delay given only in the body (retryDelay) were early"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := gradeOf(t, tt.give, tt.check)
			if l.Verdict != tt.want || l.Figure != tt.figure {
				t.Errorf("%s %q,\nwant %s %q", l.Verdict, l.Figure, tt.want, tt.figure)
			}
		})
	}
}

// TestGradeNonRetryableNotMeasured: without an answer that no retry can
// change, the non_retryable line says NOT MEASURED, never PASS and never
// nothing (a runtime that retries a 400 and one that does not are told
// apart only where a 400 came).
func TestGradeNonRetryableNotMeasured(t *testing.T) {
	l := gradeOf(t, []fakeapi.Record{limited(1, 0, 0), ok(1, 1, 5)}, CheckNonRetry)
	if l.Verdict != NotMeasured || l.Value != 0 {
		t.Errorf("non_retryable %s %v (%s), want NOT MEASURED 0", l.Verdict, l.Value, l.Figure)
	}
	// A malformed request (400) retried 4 times: 4 of 5 answers retried.
	bad := repeat(refusal(1, 0, fakeapi.KindBadRequest, 400), 5)
	if l := gradeOf(t, bad, CheckNonRetry); l.Verdict != Fail || l.Value != 4 {
		t.Errorf("non_retryable %s %v (%s), want FAIL 4", l.Verdict, l.Value, l.Figure)
	}
}

// TestGradeAttemptTimeout holds the attempt_timeout line, under a 1 s
// timeout (so a 2 s bound), to attempts whose time open is worked out
// by hand.
func TestGradeAttemptTimeout(t *testing.T) {
	tests := []struct {
		name  string
		give  []fakeapi.Record
		want  Verdict
		value float64
	}{
		// No timeout: served 3 s and 2.5 s, the client connected
		// throughout: both past 2 s.
		{"no timeout", []fakeapi.Record{ok(1, 0, 3000), ok(2, 10, 2510), ok(3, 20, 120)}, Fail, 2},
		// Cancelled at 1 s, and at 1.9 s on a loaded machine: within.
		{"cancelled", []fakeapi.Record{cancelled(ok(1, 0, 1000)), left(cancelled(ok(2, 0, 1900)), 1900), ok(3, 2000, 2100)}, Pass, 0},
		// The client left at 1 s, the server finished at 3 s: the client
		// gave it up (cancellation grades the server's side).
		{"left, server ran on", []fakeapi.Record{left(ok(1, 0, 3000), 1000)}, Pass, 0},
		// Nothing outlasted the timeout.
		{"all fast", []fakeapi.Record{ok(1, 0, 100), ok(2, 0, 900)}, NotMeasured, 0},
	}
	rules := testRules()
	rules.AttemptTimeout = time.Second
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Line
			for _, x := range Grade("test", tt.give, rules).Lines {
				if x.Check == CheckTimeout {
					l = x
				}
			}
			if l.Verdict != tt.want || l.Value != tt.value {
				t.Errorf("%s %v (%s), want %s %v", l.Verdict, l.Value, l.Figure, tt.want, tt.value)
			}
		})
	}
	// With no timeout to hold attempts to, there is no line.
	for _, l := range Grade("test", []fakeapi.Record{ok(1, 0, 3000)}, testRules()).Lines {
		if l.Check == CheckTimeout {
			t.Errorf("an attempt_timeout line without a timeout: %+v", l)
		}
	}
}

// tool makes r a call of tool t.
func tool(r fakeapi.Record) fakeapi.Record { r.Path = "/tools/lookup"; return r }

// withKey gives r the Idempotency-Key k.
func withKey(r fakeapi.Record, k string) fakeapi.Record { r.IdempotencyKey = k; return r }

// first has r declare a first attempt (x-stainless-retry-count 0).
func first(r fakeapi.Record) fakeapi.Record { r.Attempt = 1; return r }

// left has r's client close its connection at ms at.
func left(r fakeapi.Record, at int) fakeapi.Record { r.Left = time.Duration(at) * ms1; return r }

// TestGradeSeesWhatTheServerSees holds the lines to what the server saw of
// the defects of issue 39, each of which the grading before it missed or
// raised a false alarm on.
func TestGradeSeesWhatTheServerSees(t *testing.T) {
	write := func(r fakeapi.Record) fakeapi.Record { r.Write, r.Resource = true, "doc"; return r }
	model := func(id uint64, at, end int) fakeapi.Record {
		r := ok(id, at, end)
		r.Model, r.Service, r.Path = true, "llm", "/v1/chat/completions"
		return r
	}
	tests := []struct {
		name  string
		give  []fakeapi.Record
		check string
		want  Verdict
		value float64
	}{
		// A timeout without abort: the attempt runs to 3 s, its client
		// connected; the same request, undeclared, comes at 1.2 s.
		{"timeout without abort", []fakeapi.Record{tool(ok(1, 0, 3000)), tool(ok(1, 1200, 1300))}, CheckCancel, Fail, 1},
		// The same, through the openai SDK with its own retries off: it
		// sends x-stainless-retry-count 0 (attempt 1) on the application's
		// retry too, which declares nothing about the attempt before it.
		{"timeout without abort, SDK count 0", []fakeapi.Record{first(tool(ok(1, 0, 3000))), first(tool(ok(1, 1200, 1300)))}, CheckCancel, Fail, 1},
		{"SDK count 0 fan-out", []fakeapi.Record{first(tool(ok(1, 0, 2000))), first(tool(ok(1, 400, 2000)))}, CheckAttempts, Pass, 1},
		// A client that cancels at 200 ms and retries at once under its
		// key: the retry reaches the server 3 ms before the disconnect.
		{"cancel then retry at once", []fakeapi.Record{withKey(left(cancelled(tool(ok(1, 0, 203))), 203), "k"), withKey(tool(ok(1, 200, 300)), "k")},
			CheckCancel, Pass, 0},
		// Parallel identical calls of a fan-out stay apart, the last one
		// 400 ms behind the first (a loaded process).
		{"fan-out", []fakeapi.Record{tool(ok(1, 0, 2000)), tool(ok(1, 1, 2000)), tool(ok(1, 400, 2000))}, CheckCancel, NotMeasured, 0},
		// A tool call answered 429 (wait 1 s), the error handed to the
		// model at once, then the same tool call in the next round: two
		// calls, no early retry to measure.
		{"rounds apart", []fakeapi.Record{model(9, 0, 10), tool(limited(1, 20, 1000)), model(8, 30, 40), tool(ok(1, 50, 60))},
			CheckEarly, NotMeasured, 0},
		{"rounds apart, attempts", []fakeapi.Record{model(9, 0, 10), tool(limited(1, 20, 1000)), model(8, 30, 40), tool(ok(1, 50, 60))},
			CheckAttempts, Pass, 1},
		// Within one round the same repeat is an early retry.
		{"one round", []fakeapi.Record{model(9, 0, 10), tool(limited(1, 20, 1000)), tool(ok(1, 50, 60))}, CheckEarly, Fail, 1},
		// A write timed out and retried without a key: flagged, though the
		// client cancelled it; under its key it is not the client's doing.
		{"write retried without a key", []fakeapi.Record{cancelled(write(ok(1, 0, 200))), write(ok(1, 210, 300))}, CheckWrites, Fail, 1},
		{"write retried after a 5xx", []fakeapi.Record{write(overloaded(1, 0, 0)), write(ok(1, 10, 30))}, CheckWrites, Fail, 1},
		{"write retried under its key", []fakeapi.Record{withKey(write(ok(1, 0, 2000)), "w"), withKey(write(ok(1, 200, 300)), "w")},
			CheckWrites, Pass, 0},
		// A write cancelled at 200 ms and retried at once under its key:
		// the retry is admitted 3 ms before the server sees the cancel, a
		// race with the attempt its client let go, not another write.
		{"write retried as its cancel lands", []fakeapi.Record{withKey(left(cancelled(write(ok(1, 0, 203))), 203), "w"),
			func() fakeapi.Record { r := withKey(write(ok(1, 200, 300)), "w"); r.WriteRace = true; return r }()}, CheckWrites, Pass, 0},
		{"write racing one left running", []fakeapi.Record{write(ok(1, 0, 3000)),
			func() fakeapi.Record { r := write(ok(2, 200, 300)); r.WriteRace = true; return r }()}, CheckWrites, Fail, 1},
		{"write retried after a 429", []fakeapi.Record{write(limited(1, 0, 10)), write(ok(1, 10, 30))}, CheckWrites, Pass, 0},
		// Nothing to measure reads NOT MEASURED, never PASS.
		{"no shared 429", []fakeapi.Record{ok(1, 0, 10)}, CheckJitter, NotMeasured, 0},
		{"no 429 retried", []fakeapi.Record{ok(1, 0, 10)}, CheckEarly, NotMeasured, 0},
		{"nothing given up", []fakeapi.Record{ok(1, 0, 10)}, CheckCancel, NotMeasured, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Line
			for _, x := range Grade("test", tt.give, testRules()).Lines {
				if x.Check == tt.check && x.Service == "s" {
					l = x
				}
			}
			if l.Verdict != tt.want || l.Value != tt.value {
				t.Errorf("%s %v (%s), want %s %v", l.Verdict, l.Value, l.Figure, tt.want, tt.value)
			}
		})
	}
}

func TestJitterLeavesAnUncappedCrowdToInFlight(t *testing.T) {
	// Six calls, over a cap of 2, meet 429s within 5 ms, told 100 ms, and
	// retry with full jitter over 100 ms: spread for their delays (more
	// than 20 ms), not for a request limit of 10 a second (600 ms).
	var recs []fakeapi.Record
	for i := range 6 {
		at := 100 + 20*i
		recs = append(recs, limited(uint64(i), i, 100), ok(uint64(i), at, at+1000))
	}
	rules := testRules()
	rules.RequestRate["s"] = 10
	grade := func(rules Rules) map[string]Line {
		lines := map[string]Line{}
		for _, l := range Grade("test", recs, rules).Lines {
			lines[l.Check] = l
		}
		return lines
	}
	lines := grade(rules)
	if lines[CheckInFlight].Verdict != Fail || lines[CheckJitter].Verdict != Pass || !strings.Contains(lines[CheckJitter].Figure, "the missing cap's doing") {
		t.Errorf("in_flight %s, jitter %s (%s): want the crowd on in_flight's FAIL alone", lines[CheckInFlight].Verdict, lines[CheckJitter].Verdict, lines[CheckJitter].Figure)
	}
	// Under a cap it keeps, the same crowd is jitter's.
	rules.MaxInFlight["s"] = 10
	if lines = grade(rules); lines[CheckInFlight].Verdict != Pass || lines[CheckJitter].Verdict != Fail {
		t.Errorf("capped: in_flight %s, jitter %s (%s), want PASS and FAIL", lines[CheckInFlight].Verdict, lines[CheckJitter].Verdict, lines[CheckJitter].Figure)
	}
}

func TestGradeCountsLostToolResults(t *testing.T) {
	// Two tool calls: one answered, one given up after two 429s.
	recs := []fakeapi.Record{tool(ok(1, 0, 10)), tool(limited(2, 0, 0)), tool(limited(2, 5, 0))}
	rep := Grade("x", recs, testRules())
	if rep.ToolCalls != 2 || rep.LostResults != 1 {
		t.Errorf("%d tool calls, %d lost, want 2 and 1", rep.ToolCalls, rep.LostResults)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "1 of 2 tool calls lost their result") {
		t.Errorf("summary: %v\n%s", err, text.String())
	}
}

func TestJitterWarnsOnTwoHerdsNotOne(t *testing.T) {
	// Shared 429s a second apart, 5 calls each, told 100 ms: the retries
	// of herd groups come at once, the others spread 150 ms apart.
	shared := func(groups, herds int) []fakeapi.Record {
		var recs []fakeapi.Record
		for g := range groups {
			for i := range 5 {
				id, at := uint64(10*g+i), 1000*g+i
				retry := at + 100 + 150*i
				if g < herds {
					retry = at + 100
				}
				recs = append(recs, limited(id, at, 100), ok(id, retry, retry+10))
			}
		}
		return recs
	}
	for _, tt := range []struct {
		groups, herds int
		want          Verdict
	}{{5, 0, Pass}, {5, 1, Pass}, {5, 2, Warn}, {4, 2, Fail}} {
		l := gradeOf(t, shared(tt.groups, tt.herds), CheckJitter)
		if l.Verdict != tt.want || !strings.HasPrefix(l.Figure, fmt.Sprintf("%d of %d shared 429s", tt.herds, tt.groups)) {
			t.Errorf("%d herds of %d: %s (%s), want %s", tt.herds, tt.groups, l.Verdict, l.Figure, tt.want)
		}
	}
}

// With a decision, in_flight grades by the caps it sets and by nothing
// else: research-agent's decision caps sources alone, so llm is not held
// to the arithmetic's cap a client following recommend never set; each
// rule names the strategy, its pace in the file's unit and the arithmetic.
func TestRulesForTakesTheDecisionsCaps(t *testing.T) {
	sc, err := scenarios.Builtin("research-agent")
	if err != nil {
		t.Fatal(err)
	}
	plans, _ := decision.PlanServices(sc, 0.7)
	d := &decision.Result{Plans: plans, Tuned: scenarios.Strategy{Name: "semaphore-4", MaxInFlightPerService: map[string]int{"sources": 5}, TokenBucket: true, Headroom: 0.7}}
	r := RulesFor(sc, d)
	var arithmetic int
	for _, p := range plans {
		if p.Service.Name == "sources" {
			arithmetic = p.MaxInFlight
		}
	}
	want := fmt.Sprintf("the cap simbench recommend --emit sets, strategy semaphore-4 paced at 420 requests/min; the Little's-law arithmetic alone gives %d at headroom 0.7", arithmetic)
	if r.MaxInFlight["sources"] != 5 || r.CapSource["sources"] != want {
		t.Errorf("sources: cap %d (%q), want 5 (%q)", r.MaxInFlight["sources"], r.CapSource["sources"], want)
	}
	if n, ok := r.MaxInFlight["llm"]; ok || !strings.Contains(r.CapSource["llm"], "simbench recommend sets none on llm") {
		t.Errorf("llm: cap %d (%v), rule %q; want none, saying recommend sets none", n, ok, r.CapSource["llm"])
	}
	line := inFlight(nil, r.MaxInFlight["llm"], r.CapSource["llm"])
	if line.Verdict != Pass || !strings.HasPrefix(line.Rule, "no cap: simbench recommend sets none on llm") {
		t.Errorf("llm's line: %s %q", line.Verdict, line.Rule)
	}
}
