package scenarios

import (
	"strings"
	"testing"

	"github.com/simbench/simbench/spec"
)

// TestDailyDecode reads a service's daily quota and its clock into the
// fake service's configuration.
func TestDailyDecode(t *testing.T) {
	sc, err := Parse("a.toml", []byte(nestedHead+`rpd = 1000
tpd = 2_000_000
daily_reset = "00:00"
timezone = "America/Los_Angeles"
clock_start = "2025-06-01T23:50:00"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := spec.Daily{RPD: 1000, TPD: 2_000_000, Reset: "00:00", Zone: "America/Los_Angeles", Start: "2025-06-01T23:50:00"}
	if got := sc.Services[0].Model().Daily; got != want {
		t.Errorf("daily %+v, want %+v", got, want)
	}
}

// TestDailyProblems: each mistake of a daily quota is reported at its
// file, line and key.
func TestDailyProblems(t *testing.T) {
	for _, tc := range []struct{ give, want string }{
		{"rpd = -5\n", `a.toml:12:1: services.s.rpd: is -5; it must be at least 1`},
		{"tpd = 0\n", `a.toml:12:1: services.s.tpd: is 0; it must be at least 1`},
		{"rpd = 10\ndaily_reset = \"25:00\"\n", `a.toml:13:1: services.s.daily_reset: "25:00" is not a time of day`},
		{"rpd = 10\ndaily_reset = \"midnight\"\n", `a.toml:13:1: services.s.daily_reset: "midnight" is not a time of day`},
		{"rpd = 10\ntimezone = \"Mars/Olympus\"\n", `a.toml:13:1: services.s.timezone: "Mars/Olympus" is not a time zone`},
		{"rpd = 10\ntimezone = \"Local\"\n", `a.toml:13:1: services.s.timezone: "Local" is not a time zone`},
		{"rpd = 10\nclock_start = \"2025-13-01T00:00:00\"\n", `a.toml:13:1: services.s.clock_start: "2025-13-01T00:00:00" is not a wall time`},
		{"rpd = 10\ntimezone = \"PST\"\ndaily_reset = \"24:00\"\nclock_start = \"2025-01-01 23:59\"\n", `a.toml:14:1: services.s.daily_reset: "24:00" is not a time of day`},
		{"rpd = 10\ntimezone = \"PST\"\ndaily_reset = \"24:00\"\nclock_start = \"2025-01-01 23:59\"\n", `a.toml:15:1: services.s.clock_start: "2025-01-01 23:59" is not a wall time`},
		{"timezone = \"UTC\"\n", `a.toml:12:1: services.s.timezone: sets the clock of a daily quota, but there is none`},
	} {
		_, err := Parse("a.toml", []byte(nestedHead+tc.give))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.give, err, tc.want)
		}
	}
}
