package sim

import (
	"testing"

	"github.com/simbench/simbench/scenarios"
)

// trillionTPM is a scenario file on an enterprise token limit: 10^12 tokens
// a minute, offered about twenty times that by 40 agents whose calls each
// carry the most tokens a call may (10^8).
const trillionTPM = `
name = "trillion"
seed = 7
duration = "1m"

[workload]
sessions = 40
calls = [ { tool = "embed", count = 8 } ]

[services.llm]
tpm = 1_000_000_000_000
latency = { dist = "uniform", min = "50ms", max = "150ms" }

[tools.embed]
service = "llm"
tokens = 100_000_000

[[strategy]]
name = "unbounded"
retry = { backoff = "full-jitter", base = "100ms", cap = "2s", attempts = 3, honor_retry_after = true }

[[strategy]]
name = "paced"
token_bucket = true
headroom = 0.9
retry = { backoff = "full-jitter", base = "100ms", cap = "2s", attempts = 3, honor_retry_after = true }
`

// A token limit of 10^12 a minute validates and runs with exact token
// accounting: the service charges exactly 10^8 tokens for every request it
// admits, never admits more than its bucket holds plus the limit's rate
// over the run, turns the excess away with 429s, and a client pacing
// itself at 90% of the limit meets none.
func TestTrillionTokensPerMinute(t *testing.T) {
	sc, err := scenarios.Parse("trillion.toml", []byte(trillionTPM))
	if err != nil {
		t.Fatal(err)
	}
	const tpm, perCall = 1_000_000_000_000, 100_000_000
	for i := range sc.Strategies {
		st := &sc.Strategies[i]
		e, err := NewEngine(sc, st)
		if err != nil {
			t.Fatal(err)
		}
		if !e.Run(t.Context(), nil) {
			t.Fatal("run did not complete")
		}
		s := e.models[0].Stats()
		if s.TokensAccepted != s.Accepted*perCall || s.Accepted == 0 {
			t.Errorf("%s: %d tokens charged for %d requests admitted, want %d each", st.Name, s.TokensAccepted, s.Accepted, perCall)
		}
		// The bucket starts full (one minute's worth) and refills at the
		// limit; the run, its drain included, lasts at most drainLimit.
		if most := tpm + tpm*DrainLimit(sc.Duration).Minutes(); float64(s.TokensAccepted) > most {
			t.Errorf("%s: %d tokens admitted, more than the %.0f the limit allows", st.Name, s.TokensAccepted, most)
		}
		switch st.Name {
		case "unbounded":
			if s.RateLimited == 0 {
				t.Errorf("unbounded: no 429 at twenty times the limit")
			}
		case "paced":
			if s.RateLimited != 0 {
				t.Errorf("paced: %d 429s at 90%% of the limit", s.RateLimited)
			}
		}
		t.Logf("%s: %d admitted, %d tokens, %d rate limited", st.Name, s.Accepted, s.TokensAccepted, s.RateLimited)
	}
}
