package check

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
)

// spent is a 429 of a spent daily quota at ms at, answered at once, whose
// reset is reset ms away.
func spent(at, reset int) fakeapi.Record {
	r := limited(1, at, reset)
	r.Daily = true
	return r
}

// TestDailyQuotaLine grades the requests sent to a spent daily quota
// before its reset, by counts worked out from the records.
func TestDailyQuotaLine(t *testing.T) {
	hour := 3_600_000 // ms
	for _, tc := range []struct {
		name    string
		give    []fakeapi.Record
		verdict Verdict
		value   float64
		figure  string
	}{
		{"gives up at once", []fakeapi.Record{ok(1, 0, 10), spent(10, hour)}, Pass, 0,
			"0 requests sent to a spent daily quota before its reset, of 1 answered with its 429 (the first told the reset was 1h0m0s away)"},
		{"retries every second", []fakeapi.Record{spent(10, hour), spent(1010, hour-1000), spent(2010, hour-2000), spent(3010, hour-3000)}, Fail, 3,
			"3 requests sent to a spent daily quota before its reset, of 4 answered"},
		{"a request already on its way", []fakeapi.Record{func() fakeapi.Record { r := spent(5, hour); r.Answered = 10 * ms1; return r }(), spent(7, hour-2)}, Pass, 0, "0 requests"},
		{"waits for the reset", []fakeapi.Record{spent(10, 1000), ok(1, 1010, 1020), spent(1030, hour)}, Pass, 0, "of 2 answered"},
		{"never meets it", []fakeapi.Record{ok(1, 0, 10)}, NotMeasured, 0, "no request met a spent daily quota"},
	} {
		rules := testRules()
		rules.Daily = map[string]bool{"s": true}
		var l Line
		for _, x := range Grade("test", tc.give, rules).Lines {
			if x.Check == CheckDaily {
				l = x
			}
		}
		if l.Verdict != tc.verdict || l.Value != tc.value || !strings.Contains(l.Figure, tc.figure) {
			t.Errorf("%s: %s %v %q, want %s %v %q", tc.name, l.Verdict, l.Value, l.Figure, tc.verdict, tc.value, tc.figure)
		}
	}
	if l := gradeOfAll(testRules(), []fakeapi.Record{spent(10, 1000)}); l {
		t.Error("a daily_quota line on a service without a daily quota")
	}
}

// gradeOfAll reports whether grading recs under rules gives a daily_quota
// line.
func gradeOfAll(rules Rules, recs []fakeapi.Record) bool {
	for _, l := range Grade("test", recs, rules).Lines {
		if l.Check == CheckDaily {
			return true
		}
	}
	return false
}

// TestDailyQuotaServed grades two clients of a served tool whose daily
// quota (1 request) is spent with its reset an hour away: one retries the
// 429 three times in a row (FAIL, 3), the other gives up at once (PASS,
// 0). The hour makes the verdicts independent of the machine's speed.
func TestDailyQuotaServed(t *testing.T) {
	sc, err := scenarios.Parse("daily.toml", []byte(`name = "daily"
duration = "1m"
[workload]
sessions = 1
calls = [ { tool = "t", count = 1 } ]
[services.s]
headers = "standard"
rpd = 1
clock_start = "2025-01-01T23:00:00"
[tools.t]
service = "s"
[[strategy]]
name = "x"
`))
	if err != nil {
		t.Fatal(err)
	}
	var rec Recorder
	cfg := fakeapi.ServerConfig{Seed: sc.Seed, OnRequest: rec.Add}
	cfg.Services = append(cfg.Services, setup.ServeConfig(sc, &sc.Services[0]))
	srv, err := fakeapi.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	send := func(client string) int {
		req, err := http.NewRequest("POST", srv.URL("s")+"/tools/t", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(fakeapi.ClientHeader, client)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if got := send("naive"); got != 200 {
		t.Fatalf("first request: %d, want 200", got)
	}
	for range 4 {
		if got := send("naive"); got != 429 {
			t.Fatalf("naive: %d, want 429", got)
		}
	}
	if got := send("polite"); got != 429 {
		t.Fatalf("polite: %d, want 429", got)
	}
	recs, _ := rec.Records()
	want := map[string]struct {
		v Verdict
		n float64
	}{"naive": {Fail, 3}, "polite": {Pass, 0}}
	seen := 0
	for _, l := range Grade("daily", recs, RulesFor(sc, nil)).Lines {
		if l.Check != CheckDaily {
			continue
		}
		seen++
		if w := want[l.Client]; l.Verdict != w.v || l.Value != w.n || !strings.Contains(l.Figure, "1h0m0s away") {
			t.Errorf("%s: %s %v %q, want %s %v and the hour to the reset", l.Client, l.Verdict, l.Value, l.Figure, w.v, w.n)
		}
	}
	if seen != 2 {
		t.Errorf("%d daily_quota lines, want one per client", seen)
	}
}
