package reports

import (
	"math"
	"time"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/internal/fixtures"
	"github.com/simbench/simbench/results"
)

// noise is a tiny deterministic generator (a 64-bit LCG), so fixtures do
// not depend on the standard library's random streams.
type noise uint64

// next returns a value in [0, 1).
func (n *noise) next() float64 {
	*n = *n*6364136223846793005 + 1442695040888963407
	return float64(uint64(*n)>>11) / (1 << 53)
}

// strategySpec is what a fixture strategy is made from.
type strategySpec struct {
	name                string
	cap                 int
	turns               int64
	latency             results.Summary // turn latency, ms
	callLatency         results.Summary
	hist                []int64 // calls taking 1, 2, … attempts
	failedHist          []int64 // of hist, the calls that gave up
	retry               string
	rateLimited, failed int64
	early, races        int64
	wasted              float64
	peak                int
	rate                func(t float64, n *noise) (started, limited float64, inFlight int)
}

// tier3Results is a hand-built results file shaped like a 20-minute run of
// the tier3 scenario: 10,000 requests/min (166.7/s) at 200–900 ms, eight
// calls per turn, four strategies.
func tier3Results() *results.Results {
	r := &results.Results{
		Scenario:        "tier3",
		Description:     "Research agent on OpenAI tier-3 limits: 8 lookups per turn",
		Seed:            42,
		SimbenchVersion: "v0.3.0",
		DurationS:       tier3Duration,
		Mode:            "virtual",
		Limits:          []results.ServiceLimits{{Service: "llm", RequestsPerMinute: 10000, TokensPerMinute: 10_000_000, CallsPerTurn: 8}},
	}
	n := noise(42)
	for _, sp := range tier3Specs() {
		r.Strategies = append(r.Strategies, sp.result(&n))
	}
	plan, err := decision.Recommend(decision.Service{
		Name: "llm", RPM: 10000, TPM: 10_000_000, TokensPerCall: 1000,
		MeanLatency: 550 * time.Millisecond, CallsPerTurn: 8, Headroom: 0.7,
	})
	if err != nil {
		panic(err)
	}
	rec := plan.Recommendation()
	rec.VerifiedCap = 48
	r.Recommendation = map[string]results.Recommendation{"llm": rec}
	return r
}

// tier3Duration and tier3Limit are tier3Results' run length (s) and
// request limit (requests/s).
const (
	tier3Duration = 1200
	tier3Limit    = 10000.0 / 60
)

// tier3Specs are tier3Results' four strategies.
func tier3Specs() []strategySpec {
	const limit = tier3Limit
	return []strategySpec{
		{
			name: "sequential", cap: 1, turns: 5210,
			latency:     results.Summary{Mean: 4480, P50: 4420, P95: 5710, P99: 6240, Max: 7380},
			callLatency: results.Summary{Mean: 552, P50: 548, P95: 861, P99: 893, Max: 900},
			hist:        []int64{41680},
			retry:       "exponential 500ms–8s, 3 attempts, honours Retry-After",
			peak:        1,
			rate: func(t float64, n *noise) (float64, float64, int) {
				return 68 + 4*n.next(), 0, 1
			},
		},
		{
			name: "unbounded", cap: 0, turns: 6020,
			latency:     results.Summary{Mean: 2650, P50: 1210, P95: 9870, P99: 21400, Max: 38200},
			callLatency: results.Summary{Mean: 1890, P50: 640, P95: 7420, P99: 18800, Max: 36100},
			hist:        []int64{38000, 7400, 2100, 560, 100},
			failedHist:  []int64{112, 0, 0, 0, 100},
			retry:       "exponential 500ms–8s, 3 attempts, honours Retry-After",
			rateLimited: 13730, failed: 212, early: 2140, races: 37, wasted: 412.6,
			peak: 400,
			rate: func(t float64, n *noise) (float64, float64, int) {
				// Bursts every 30 s overshoot the limit and draw 429s.
				phase := math.Mod(t, 30)
				started := 90 + 20*n.next()
				if phase < 4 {
					started = 240 + 60*n.next()
				}
				if t == 637 {
					started = 455 // one storm, a peak downsampling must keep
				}
				limited := max(0, started-limit)
				return started, limited, min(400, int(started*0.55+40*n.next()))
			},
		},
		{
			name: "bounded-8", cap: 8, turns: 6680,
			latency:     results.Summary{Mean: 1040, P50: 980, P95: 1540, P99: 1890, Max: 2600},
			callLatency: results.Summary{Mean: 571, P50: 560, P95: 872, P99: 897, Max: 930},
			hist:        []int64{53440},
			retry:       "full-jitter 1s–60s, 5 attempts, honours Retry-After",
			wasted:      3.2,
			peak:        8,
			rate: func(t float64, n *noise) (float64, float64, int) {
				return 86 + 6*n.next(), 0, 6 + int(3*n.next())
			},
		},
		{
			name: "bounded-32-nojitter", cap: 32, turns: 6410,
			latency:     results.Summary{Mean: 1310, P50: 1010, P95: 2480, P99: 4100, Max: 6900},
			callLatency: results.Summary{Mean: 690, P50: 590, P95: 1900, P99: 3400, Max: 6100},
			hist:        []int64{50500, 640, 100, 40},
			retry:       "exponential 1s–60s, 5 attempts, honours Retry-After",
			rateLimited: 740, early: 0, wasted: 21.7,
			peak: 32,
			rate: func(t float64, n *noise) (float64, float64, int) {
				started := 120 + 40*n.next()
				if math.Mod(t, 60) < 2 {
					started = 175 + 10*n.next() // synchronized retries
				}
				return started, max(0, started-limit), 20 + int(12*n.next())
			},
		},
	}
}

// result is the strategy's figures, its timeline drawn from n.
func (sp strategySpec) result(n *noise) results.StrategyResult {
	var calls, attempts int64
	for i, h := range sp.hist {
		calls += h
		attempts += int64(i+1) * h
	}
	s := results.StrategyResult{
		Name:                  sp.name,
		MaxInFlight:           sp.cap,
		Turns:                 sp.turns,
		Calls:                 calls - sp.failed,
		Attempts:              attempts,
		FailedTurns:           sp.failed,
		TurnLatencyMs:         sp.latency,
		AnswerLatencyMs:       answerOf(sp.latency, sp.turns, sp.failed),
		CallLatencyMs:         sp.callLatency,
		GoodputPerS:           math.Round(float64(calls-sp.failed)/tier3Duration*100) / 100,
		AnsweredGoodputPerS:   math.Round(float64(calls-sp.failed)/tier3Duration*float64(sp.turns-sp.failed)/float64(max(sp.turns, 1))*100) / 100,
		AchievedTurnsPerS:     math.Round(float64(sp.turns)/tier3Duration*1000) / 1000,
		RateLimited:           sp.rateLimited,
		Failed:                sp.failed,
		EarlyRetries:          sp.early,
		WastedWorkS:           sp.wasted,
		WastedTokens:          int64(sp.wasted * 1800),
		WriteRaces:            sp.races,
		PeakInFlight:          map[string]int{"llm": sp.peak},
		QuotaUsed:             map[string]float64{"llm": math.Round(float64(attempts)/tier3Duration/tier3Limit*1000) / 1000},
		AttemptsPerCall:       sp.hist,
		AttemptsPerFailedCall: sp.failedHist,
		Retry:                 sp.retry,
		LatencyCDF:            cdf(sp.latency),
		AnswerCDF:             answerCDF(cdf(sp.latency), sp.turns, sp.failed),
	}
	for t := range tier3Duration {
		started, limited, inFlight := sp.rate(float64(t), n)
		s.Timeline = append(s.Timeline, results.TimelinePoint{
			T: float64(t), BucketS: 1,
			Started:     math.Round(started*10) / 10,
			RateLimited: math.Round(limited*10) / 10,
			InFlight:    inFlight,
		})
	}
	return s
}

// cdf samples a turn-latency distribution whose median and 95th percentile
// match s: log-latency is logistic between them, capped at s.Max.
// answerCDF makes up an answer CDF from a latency CDF, taking the failed
// turns to be the slowest: it levels off at the answered share.
func answerCDF(c []results.CDFPoint, turns, failed int64) []results.CDFPoint {
	share := 1 - float64(failed)/float64(turns)
	var out []results.CDFPoint
	for _, p := range c {
		if p.P <= share {
			out = append(out, p)
		}
	}
	return out
}

func cdf(s results.Summary) []results.CDFPoint {
	spread := math.Log(s.P95/s.P50) / math.Log(19) // 19 = 0.95/0.05
	var out []results.CDFPoint
	for i := 1; i < 40; i++ {
		p := float64(i) / 40
		ms := min(s.Max, s.P50*math.Exp(spread*math.Log(p/(1-p))))
		out = append(out, results.CDFPoint{Ms: math.Round(ms), P: p})
	}
	return append(out, results.CDFPoint{Ms: s.Max, P: 1})
}

// tier3Options are the plot options that go with tier3Results; the
// arithmetic is in the results' reasons, so no Plans, and the limits in
// their Limits.
func tier3Options() Options {
	return Options{
		Sweep:         []results.SweepRow{decision.NewSweepRow("", fixtures.Tier3Sweep(), decision.Rule{MaxShare: decision.DefaultMaxRateLimitedShare})},
		SweepStrategy: "bounded-N",
	}
}

// backoffResults is tier3Results with two strategies at cap 8 that differ
// only in their retry policy, as the burst-8 scenario has them.
func backoffResults() *results.Results {
	r := tier3Results()
	b8 := r.Strategies[2]
	nj := b8
	nj.Name, nj.Retry = "bounded-8-nojitter", "exponential 1s–30s, 6 attempts, ignores Retry-After"
	nj.AttemptsPerCall = []int64{48000, 3900, 1100, 300, 90, 50}
	nj.AttemptsPerFailedCall = []int64{0, 0, 0, 0, 0, 50}
	nj.Attempts, nj.Calls, nj.Failed, nj.FailedTurns = 61310, 53390, 50, 48
	nj.RateLimited, nj.EarlyRetries = 7870, 0
	nj.AnswerLatencyMs = answerOf(results.Summary{P50: 1300, P95: 6100, P99: 12000}, nj.Turns, nj.FailedTurns)
	r.Strategies = append(r.Strategies, nj)
	return r
}

// answerOf makes up a time-to-answer summary to go with a turn-latency
// one: failed turns are taken to be the slowest, so a percentile past the
// answered share is unanswered and the others keep their turn latency.
func answerOf(l results.Summary, turns, failed int64) results.AnswerSummary {
	share := 1 - float64(failed)/float64(turns)
	at := func(q, v float64) results.AnswerMs {
		if q > share {
			return results.Unanswered
		}
		return results.AnswerMs(v)
	}
	return results.AnswerSummary{P50: at(0.5, l.P50), P95: at(0.95, l.P95), P99: at(0.99, l.P99), AnsweredShare: math.Round(share*1e6) / 1e6}
}

// tier3Later is tier3Results after a change: bounded-8 got faster,
// unbounded drew more 429s, bounded-32-nojitter is gone and bounded-16 is new.
func tier3Later() *results.Results {
	r := tier3Results()
	r.SimbenchVersion = "v0.4.0"
	keep := r.Strategies[:0]
	for _, s := range r.Strategies {
		switch s.Name {
		case "bounded-8":
			s.TurnLatencyMs.P50, s.TurnLatencyMs.P95, s.TurnLatencyMs.P99 = 930, 1390, 1750
			s.AnswerLatencyMs = answerOf(s.TurnLatencyMs, s.Turns, s.FailedTurns)
			s.GoodputPerS, s.AnsweredGoodputPerS = 46.1, 46.1
			s.Turns = 6850
		case "unbounded":
			s.RateLimited = 15210
			s.EarlyRetries = 0
			s.WastedWorkS = 398.1
		case "bounded-32-nojitter":
			continue
		}
		keep = append(keep, s)
	}
	b16 := keep[len(keep)-1]
	b16.Name, b16.MaxInFlight = "bounded-16", 16
	b16.PeakInFlight = map[string]int{"llm": 16}
	r.Strategies = append(keep, b16)
	return r
}
