package sim

import (
	"testing"

	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/results"
)

// TestDailyQuotaFigures runs one session, one call a turn of 1 s, a
// second's think between turns, against a service of 3 requests a day
// whose day ends 60 s into the run, for 85.5 s. Worked out by hand:
//
//   - "fail-fast" makes one attempt: turns at 0, 2 and 4 s are admitted;
//     those at 6 … 59 s fail at once on the spent quota (54 turns); after
//     the reset, turns at 60, 62 and 64 s are admitted and those at
//     66 … 85 s fail at once (20): 74 turns failed fast, no second spun.
//   - "spin" retries every 5 s, 4 attempts, ignoring Retry-After: the
//     calls begun at 6, 22 and 38 s meet the quota at all 4 attempts and
//     fail 15 s later; the one at 54 s is admitted at its third attempt,
//     64 s, after the reset, and ends at 65 s (11 s); after turns at 66
//     and 68 s, the call at 70 s fails at 85 s (15 s): 4 × 15 + 11 = 71 s
//     spun, no turn failed fast.
func TestDailyQuotaFigures(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "daily"
duration = "85.5s"
[workload]
sessions = 1
think = "1s"
calls = [ { tool = "t", count = 1 } ]
[services.s]
latency = "1s"
network_delay = "0s"
headers = "standard"
rpd = 3
clock_start = "2025-01-01T23:59:00"
[tools.t]
service = "s"
[[strategy]]
name = "fail-fast"
[[strategy]]
name = "spin"
retry = { backoff = "constant", base = "5s", attempts = 4, honor_retry_after = false }
`)
	res := runOnly(t, sc)
	want := map[string]results.DailyQuota{"fail-fast": {FailedFastTurns: 74}, "spin": {SpinS: 71}}
	for _, s := range res.Strategies {
		if s.DailyQuota == nil || *s.DailyQuota != want[s.Name] {
			t.Errorf("%s: daily quota %+v, want %+v (turns %d, failed %d)", s.Name, s.DailyQuota, want[s.Name], s.Turns, s.FailedTurns)
		}
	}
}
