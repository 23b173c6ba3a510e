package check

import (
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi"
)

// spent is a 429 of a spent daily quota at ms at, answered at once, whose
// reset is reset ms away.
func spent(at, reset int) fakeapi.Record {
	r := limited(1, at, reset)
	r.Daily, r.DailyReset = true, time.Duration(reset)*ms1
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
