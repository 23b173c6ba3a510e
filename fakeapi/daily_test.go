package fakeapi

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/spec"
)

// dailyService is a service whose only limit is daily d, with standard
// headers (retry delays in whole seconds).
func dailyService(d spec.Daily) ServiceConfig {
	return ServiceConfig{Config: spec.Config{Name: "gem", Headers: spec.HeadersStandard, Daily: d}}
}

// TestDailyClosedForm offers one request every 5 s to a service of
// rpd = 5 whose clock starts a minute before its midnight (UTC) reset.
// Worked out by hand: the requests at 0, 5, …, 20 s are admitted, those
// at 25 … 55 s are refused with the wait to the reset, 60 s − t, told as
// Retry-After in whole seconds; the one at 60 s, the reset itself, and
// the next four are admitted; then nothing until the reset a day later,
// at 24 h + 60 s.
func TestDailyClosedForm(t *testing.T) {
	const rpd = 5
	reset := time.Minute
	m := newTestModel(t, dailyService(spec.Daily{RPD: rpd, Start: "2025-01-01T23:59:00"}))
	admitted := 0
	for k := range 24 {
		now := time.Duration(k) * 5 * time.Second
		d := m.Arrive(now, Request{Client: "c", Retry: RetryFresh})
		dayStart := time.Duration(0)
		if now >= reset {
			dayStart = reset
		}
		wantAdmit := now-dayStart < rpd*5*time.Second
		if d.Admitted() != wantAdmit {
			t.Fatalf("at %v: admitted %v, want %v (%+v)", now, d.Admitted(), wantAdmit, d)
		}
		if d.Admitted() {
			admitted++
			m.Finish(now, d.ID, false)
			continue
		}
		wantWait := reset - now
		if now >= reset {
			wantWait = reset + 24*time.Hour - now
		}
		if d.Status != 429 || d.Limit != LimitRPD || !d.Daily() || d.Wait != wantWait || d.RetryAfter != wantWait {
			t.Fatalf("at %v: %d %v daily=%v wait %v retry-after %v, want 429 rpd wait and retry-after %v", now, d.Status, d.Limit, d.Daily(), d.Wait, d.RetryAfter, wantWait)
		}
		if q := d.DailyQuota; q != (Quota{Limit: rpd, Remaining: 0, Reset: wantWait}) {
			t.Fatalf("at %v: daily quota %+v", now, q)
		}
	}
	if admitted != 2*rpd {
		t.Fatalf("admitted %d, want %d", admitted, 2*rpd)
	}
	next := reset + 24*time.Hour
	if d := m.Arrive(next-1, Request{Client: "c"}); d.Admitted() || d.Wait != 1 {
		t.Fatalf("a nanosecond before the second reset: %+v, want refused with wait 1ns", d)
	}
	if d := m.Arrive(next, Request{Client: "c"}); !d.Admitted() {
		t.Fatalf("at the second reset: %+v, want admitted", d)
	}
	s := m.Stats()
	if s.RateLimitedBy["rpd"] != 24-2*rpd+1 || s.RateLimited != 24-2*rpd+1 {
		t.Errorf("rate limited by %v, want rpd %d", s.RateLimitedBy, 24-2*rpd+1)
	}
	if _, ok := s.RateLimitedBy["tpd"]; ok {
		t.Errorf("tpd listed on a service without it: %v", s.RateLimitedBy)
	}
}

// TestDailyRetries counts a client's requests refused by a spent daily
// quota before the reset it was told of (each an early retry), and the
// message says it is the daily limit and when it resets.
func TestDailyRetries(t *testing.T) {
	m := newTestModel(t, dailyService(spec.Daily{RPD: 1, Zone: "America/Los_Angeles", Start: "2025-01-01T23:00:00"}))
	d := m.Arrive(0, Request{Client: "c"})
	m.Finish(0, d.ID, false)
	first := m.Arrive(time.Second, Request{Client: "c"})
	for i := range 3 {
		m.Arrive(time.Duration(2+i)*time.Minute, Request{Client: "c"})
	}
	s := m.Stats()
	if s.DailyRetries != 3 || s.EarlyRetries != 3 {
		t.Errorf("daily retries %d, early %d; want 3 and 3 (the first refusal is not a retry)", s.DailyRetries, s.EarlyRetries)
	}
	c := m.Config()
	msg := rejectMessage(&c, &first, nil)
	for _, want := range []string{"Daily quota exceeded for requests per day (RPD)", "Limit 1, Remaining 0", "resets at 00:00 America/Los_Angeles, in 59m59s", "try again in 59m59s"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

// TestDailyTokens: a tokens-per-day quota counts input and output tokens,
// settles output, and refuses for good (413) a request larger than a day.
func TestDailyTokens(t *testing.T) {
	m := newTestModel(t, dailyService(spec.Daily{TPD: 1000}))
	d := m.Arrive(0, Request{Tokens: 300, OutputTokens: 500})
	m.SettleOutput(time.Second, d.ID, 100) // 400 spent, 600 left
	m.Finish(time.Second, d.ID, false)
	if d := m.Arrive(2*time.Second, Request{Tokens: 600}); !d.Admitted() {
		t.Fatalf("600 tokens with 600 left: %+v", d)
	}
	d = m.Arrive(3*time.Second, Request{Tokens: 1})
	if d.Limit != LimitTPD || d.Wait != 24*time.Hour-3*time.Second {
		t.Fatalf("1 token with none left: %v wait %v, want tpd to midnight", d.Limit, d.Wait)
	}
	if d := m.Arrive(4*time.Second, Request{Tokens: 1001}); d.Status != 413 || d.Limit != LimitTPD {
		t.Fatalf("a request above a day's tokens: %d %v, want 413 tpd", d.Status, d.Limit)
	}
}

// TestDayClockDaylightSaving: in Los Angeles the day of the spring change
// lasts 23 hours and the autumn one 25, worked out from the calendar.
func TestDayClockDaylightSaving(t *testing.T) {
	for _, tc := range []struct {
		start string
		want  []time.Duration // the first resets, in hours since the start
	}{
		{"2025-03-08T12:00:00", []time.Duration{12, 12 + 23, 12 + 23 + 24}},
		{"2025-11-01T12:00:00", []time.Duration{12, 12 + 25, 12 + 25 + 24}},
	} {
		c, err := spec.Daily{RPD: 1, Zone: "America/Los_Angeles", Start: tc.start}.Clock()
		if err != nil {
			t.Fatal(err)
		}
		now := time.Duration(0)
		for _, h := range tc.want {
			if now = c.NextReset(now); now != h*time.Hour {
				t.Errorf("from %s: reset at %v, want %v", tc.start, now, h*time.Hour)
			}
		}
	}
}

// refDay is the day holding wall time w under resets at hh:mm: the date
// of the latest reset at or before w, found backwards from w's own date
// (the model searches forwards, with NextReset).
func refDay(w time.Time, hh, mm int) (label time.Time, next time.Time) {
	y, mo, d := w.Date()
	r := time.Date(y, mo, d, hh, mm, 0, 0, w.Location())
	if r.After(w) {
		r = time.Date(y, mo, d-1, hh, mm, 0, 0, w.Location())
	}
	y, mo, d = r.Date()
	return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC), time.Date(y, mo, d+1, hh, mm, 0, 0, w.Location())
}

// TestDailyQuotaProperty: under generated daily limits, zones, reset times
// and arrivals, no day admits more requests or tokens than its quota, by
// a plain counter per day; every daily refusal is one the counter agrees
// the day could not admit, and its wait is the time to the next reset.
func TestDailyQuotaProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		hh, mm := rapid.IntRange(0, 23).Draw(t, "hh"), rapid.IntRange(0, 59).Draw(t, "mm")
		dq := spec.Daily{
			RPD:   rapid.Int64Range(0, 20).Draw(t, "rpd"),
			TPD:   rapid.Int64Range(0, 2000).Draw(t, "tpd"),
			Zone:  rapid.SampledFrom([]string{"UTC", "America/Los_Angeles", "Europe/London", "Australia/Lord_Howe", "Asia/Kolkata"}).Draw(t, "zone"),
			Reset: time.Date(2000, 1, 1, hh, mm, 0, 0, time.UTC).Format("15:04"),
			Start: time.Date(2025, time.Month(rapid.IntRange(1, 12).Draw(t, "month")), rapid.IntRange(1, 28).Draw(t, "day"), rapid.IntRange(0, 23).Draw(t, "h"), 0, 0, 0, time.UTC).Format(spec.ClockStartLayout),
		}
		if !dq.Enabled() {
			dq.RPD = 1
		}
		m, err := NewModel(dailyService(dq), rand.New(rand.NewPCG(7, 7)))
		if err != nil {
			t.Fatal(err)
		}
		clock, err := dq.Clock()
		if err != nil {
			t.Fatal(err)
		}
		type day struct{ requests, tokens int64 }
		days := map[time.Time]*day{}
		now := time.Duration(0)
		for range rapid.IntRange(1, 200).Draw(t, "arrivals") {
			now += rapid.SampledFrom([]time.Duration{0, time.Millisecond, time.Minute, time.Hour, 7 * time.Hour, 26 * time.Hour}).Draw(t, "gap")
			tokens := rapid.Int64Range(0, 300).Draw(t, "tokens")
			label, next := refDay(clock.Wall(now), hh, mm)
			dd := days[label]
			if dd == nil {
				dd = &day{}
				days[label] = dd
			}
			d := m.Arrive(now, Request{Client: "c", Tokens: tokens})
			switch {
			case d.Admitted():
				m.Finish(now, d.ID, false)
				dd.requests++
				dd.tokens += tokens
				if (dq.RPD > 0 && dd.requests > dq.RPD) || (dq.TPD > 0 && dd.tokens > dq.TPD) {
					t.Fatalf("day %v admitted %d requests and %d tokens, past rpd %d tpd %d", label, dd.requests, dd.tokens, dq.RPD, dq.TPD)
				}
			case d.Daily():
				full := (dq.RPD > 0 && dd.requests >= dq.RPD) || (dq.TPD > 0 && dd.tokens+tokens > dq.TPD)
				if !full {
					t.Fatalf("day %v refused with %d requests and %d tokens spent", label, dd.requests, dd.tokens)
				}
				if want := next.Sub(clock.Wall(now)); d.Wait != want {
					t.Fatalf("wait %v at %v, want %v to the reset", d.Wait, clock.Wall(now), want)
				}
			case d.Status == 413:
				if tokens <= dq.TPD {
					t.Fatalf("413 for %d tokens under tpd %d", tokens, dq.TPD)
				}
			default:
				t.Fatalf("unexpected decision %+v", d)
			}
		}
	})
}
