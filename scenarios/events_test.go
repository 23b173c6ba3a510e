package scenarios

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const eventsHead = `duration = "10m"
[workload]
sessions = 1
calls = [ { tool = "t" } ]
[services.api]
rps = 10
faults = { hang_rate = 0.5 }
[services.other]
[tools.t]
service = "api"
[[strategy]]
name = "s"
`

// TestEventsProblems: every problem of a bad events file is reported at
// once, each with its line and key.
func TestEventsProblems(t *testing.T) {
	src := eventsHead + `
[[events]]
service = "apy"
at = "1m"
for = "10s"
stall = true

[[events]]
service = "api"
at = "11m"
for = "1s"
outage = true

[[events]]
service = "api"
at = "9m"
for = "2m"
latency_factor = 2

[[events]]
service = "api"
at = "1m"
for = "0s"
stall = true

[[events]]
service = "api"
at = "2m"
for = "1m"
limit_factor = 0.5
rps = 4
error_rate = 0.6

[[events]]
service = "api"
at = "2m30s"
for = "1m"
rpm = 100

[[events]]
service = "api"
at = "5m"
for = "1m"
stall = true

[[events]]
service = "api"
at = "5m30s"
for = "1m"
outage = true

[[events]]
service = "api"
at = "7m"

[[events]]
service = "other"
at = "8m"
for = "1m"
stall = false
bogus = 1

[[events]]
service = "other"
at = "8m"
for = "1m"
limit_factor = 2

[[events]]
service = "other"
at = "9m"
for = "1m"
stall = true
outage = true

[[events]]
service = "other"
at = "1m"
for = "1m"
`
	_, err := Parse("events.toml", []byte(src))
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("err = %v, want *Error", err)
	}
	want := []string{
		`events.toml:15:1: events[0].service: unknown service "apy"; did you mean "api"?`,
		`events.toml:22:1: events[1].at: is 11m0s, not before the end of the run`,
		`events.toml:29:1: events[2].for: makes the event end at 11m0s, after the end of the run (duration 10m0s); shorten it to at most 1m0s`,
		`events.toml:35:1: events[3].for: is 0`,
		`events.toml:42:1: events[4].limit_factor: scales every limit, so it cannot be set with absolute limits (rps, rpm, tpm, max_concurrent)`,
		`events.toml:44:1: events[4].error_rate: with the service's hang_rate and reset_rate makes 1.1`,
		`events.toml:46:3: events[5]: overlaps the event from 2m0s to 3m0s, which also changes limits`,
		`events.toml:58:3: events[7]: overlaps the event from 5m0s to 6m0s, which also changes stall and outage`,
		`events.toml:64:3: events[8]: needs at and for`,
		`events.toml:72:1: events[9].stall: is false, which changes nothing`,
		`events.toml:73:1: events[9].bogus: unknown key`,
		`events.toml:79:1: events[10].limit_factor: service "other" has no rps, rpm, tpm or max_concurrent to scale`,
		`events.toml:86:1: events[11].outage: is set with stall = true in the same event`,
		`events.toml:88:3: events[12]: changes nothing`,
	}
	got := err.Error()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q", w)
		}
	}
	if len(perr.Problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(perr.Problems), len(want), got)
	}
}

// TestEventsGood: events of one service that change different things may
// overlap, and back-to-back events do not overlap.
func TestEventsGood(t *testing.T) {
	sc, err := Parse("ok.toml", []byte(eventsHead+`
[[events]]
service = "api"
at = "1m"
for = "1m"
limit_factor = 0.5
[[events]]
service = "api"
at = "1m30s"
for = "1m"
latency_factor = 3
stall = true
[[events]]
service = "api"
at = "2m30s"
for = "30s"
outage = true
[[events]]
service = "other"
at = "1m"
for = "1m"
outage = true
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Events) != 4 || sc.Events[1].End() != 150*time.Second || sc.Events[2].Aspects()[0] != "outage" {
		t.Fatalf("events = %+v", sc.Events)
	}
}
