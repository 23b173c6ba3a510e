package spec

import (
	"fmt"
	"time"

	// The zone database travels in the binary, so that a scenario's
	// timezone means the same on every machine, with or without
	// /usr/share/zoneinfo.
	_ "time/tzdata"
)

// Defaults of a daily quota's clock (Daily).
const (
	// DefaultDailyReset is the time of day a daily quota resets at when
	// Daily.Reset is empty: midnight.
	DefaultDailyReset = "00:00"
	// DefaultTimezone is the zone of the reset and of the clock start when
	// Daily.Zone is empty.
	DefaultTimezone = "UTC"
	// DefaultClockStart is the wall time, in the quota's zone, at the
	// model's epoch (time 0) when Daily.Start is empty: midnight opening
	// 1 January 2025. A fixed instant, not the machine's clock, so that a
	// run's days fall the same way on every run.
	DefaultClockStart = "2025-01-01T00:00:00"
	// ClockStartLayout is how Daily.Start is written: a wall time in the
	// quota's zone, without an offset.
	ClockStartLayout = "2006-01-02T15:04:05"
)

// Daily is a per-day quota: requests and tokens a day, spent by every
// admitted request of the service (all keys together, as an account's or
// a project's daily quota is) and all given back at once at a fixed time
// of day in a time zone, as Gemini's requests-per-day limits reset at
// midnight Pacific time. A request the day's quota cannot admit gets a 429
// whose retry delay is the time until the next reset. Rejected requests
// spend nothing of it. The zero value sets no daily quota.
//
// The model's time is a duration since its epoch; Start says which wall
// time the epoch is, so that the model reads no clock and a virtual run
// and a live one meet their resets at the same times from their start.
type Daily struct {
	// RPD and TPD are requests and tokens (input plus output, as TPM
	// counts them) a day; 0: no such limit.
	RPD, TPD int64 `json:",omitempty"`
	// Reset is the time of day the quota is given back, "HH:MM" (24-hour)
	// in Zone ("": DefaultDailyReset).
	Reset string `json:",omitempty"`
	// Zone is the IANA time zone of Reset and Start, such as
	// "America/Los_Angeles" ("": DefaultTimezone). Days follow its
	// daylight saving: a day may last 23 or 25 hours.
	Zone string `json:",omitempty"`
	// Start is the wall time in Zone at the model's epoch, written as
	// ClockStartLayout ("": DefaultClockStart).
	Start string `json:",omitempty"`
}

// Enabled reports whether d sets a limit.
func (d Daily) Enabled() bool { return d.RPD > 0 || d.TPD > 0 }

// DayClock places a daily quota's resets on the model's time line: a
// model time t is the wall time Start + t.
type DayClock struct {
	start        time.Time
	hour, minute int
}

// ClockError is why a daily quota's clock does not parse: Key is the key
// (daily_reset, timezone or clock_start), Msg what is wrong with it.
type ClockError struct{ Key, Msg string }

// Error returns "KEY: MSG".
func (e *ClockError) Error() string { return e.Key + ": " + e.Msg }

// Clock returns d's clock, or a *ClockError naming the first key that does
// not parse (Config.Problems reports them all).
func (d Daily) Clock() (DayClock, error) {
	c, errs := d.clock()
	if len(errs) > 0 {
		return c, errs[0]
	}
	return c, nil
}

// clock returns d's clock and a *ClockError for each key that does not
// parse, in the order timezone, daily_reset, clock_start (a start is
// read in UTC when the zone is wrong, so its own mistake shows too).
func (d Daily) clock() (DayClock, []*ClockError) {
	var c DayClock
	var errs []*ClockError
	zone := d.Zone
	if zone == "" {
		zone = DefaultTimezone
	}
	loc, err := time.LoadLocation(zone)
	if err != nil || zone == "Local" {
		errs = append(errs, &ClockError{"timezone", fmt.Sprintf("%q is not a time zone; use an IANA name such as \"UTC\" or \"America/Los_Angeles\"", d.Zone)})
		loc = time.UTC
	}
	reset := d.Reset
	if reset == "" {
		reset = DefaultDailyReset
	}
	if at, err := time.Parse("15:04", reset); err != nil {
		errs = append(errs, &ClockError{"daily_reset", fmt.Sprintf("%q is not a time of day; write it as \"HH:MM\", 24-hour, such as \"00:00\" or \"17:30\"", d.Reset)})
	} else {
		c.hour, c.minute = at.Hour(), at.Minute()
	}
	start := d.Start
	if start == "" {
		start = DefaultClockStart
	}
	if c.start, err = time.ParseInLocation(ClockStartLayout, start, loc); err != nil {
		errs = append(errs, &ClockError{"clock_start", fmt.Sprintf("%q is not a wall time; write it as \"2025-01-01T23:30:00\", in the timezone", d.Start)})
	}
	return c, errs
}

// Wall returns the wall time at model time t.
func (c DayClock) Wall(t time.Duration) time.Time { return c.start.Add(t) }

// NextReset returns the model time of the first reset after model time t
// (strictly after: a reset at t itself has happened).
func (c DayClock) NextReset(t time.Duration) time.Duration {
	w := c.Wall(t)
	y, m, d := w.Date()
	r := time.Date(y, m, d, c.hour, c.minute, 0, 0, w.Location())
	for i := 1; !r.After(w); i++ {
		r = time.Date(y, m, d+i, c.hour, c.minute, 0, 0, w.Location())
	}
	return r.Sub(c.start)
}

// problems checks a daily quota's limits and clock.
func (d Daily) problems(ps *problems) {
	for _, l := range []struct {
		key string
		v   int64
	}{{"rpd", d.RPD}, {"tpd", d.TPD}} {
		if l.v < 0 {
			ps.add(l.key, "is %d; it must not be negative", l.v)
		} else if l.v > MaxLimit {
			ps.add(l.key, "is %d, too large: it must be at most %d", l.v, int64(MaxLimit))
		}
	}
	_, errs := d.clock()
	for _, ce := range errs {
		ps.add(ce.Key, "%s", ce.Msg)
	}
	if !d.Enabled() {
		for _, k := range []struct{ key, v string }{{"daily_reset", d.Reset}, {"timezone", d.Zone}, {"clock_start", d.Start}} {
			if k.v != "" {
				ps.add(k.key, "sets the clock of a daily quota, but there is none; add rpd or tpd, or remove %s", k.key)
			}
		}
	}
}
