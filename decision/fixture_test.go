package decision

import (
	"time"

	"github.com/simbench/simbench/results"
)

// tier3Service is the tier3 scenario's one service, as Recommend's input.
func tier3Service() Service {
	return Service{
		Name: "llm", RPM: 10000, TPM: 10_000_000, TokensPerCall: 1000,
		MeanLatency: 550 * time.Millisecond, CallsPerTurn: 8, Headroom: 0.7,
	}
}

// tier3Sweep is bounded-N over a range of caps (reports' fixture of the
// same name draws it): goodput saturates near
// 48–64, 429s start past 64.
func tier3Sweep() []results.SweepPoint {
	return []results.SweepPoint{
		{Cap: 1, P50Ms: 4420, P95Ms: 5710, AnsweredShare: 1, GoodputPerS: 12.1},
		{Cap: 2, P50Ms: 2250, P95Ms: 3010, AnsweredShare: 1, GoodputPerS: 24.0},
		{Cap: 4, P50Ms: 1320, P95Ms: 1980, AnsweredShare: 1, GoodputPerS: 47.5},
		{Cap: 8, P50Ms: 980, P95Ms: 1540, AnsweredShare: 1, GoodputPerS: 89.1},
		{Cap: 16, P50Ms: 890, P95Ms: 1310, AnsweredShare: 1, GoodputPerS: 121.4},
		{Cap: 32, P50Ms: 860, P95Ms: 1220, AnsweredShare: 1, GoodputPerS: 141.9},
		{Cap: 48, P50Ms: 850, P95Ms: 1190, AnsweredShare: 1, GoodputPerS: 146.2, RateLimitedShare: 0.0004},
		{Cap: 64, P50Ms: 845, P95Ms: 1170, AnsweredShare: 1, GoodputPerS: 147.0, RateLimitedShare: 0.0061},
		{Cap: 96, P50Ms: 990, P95Ms: 3900, AnsweredShare: 0.97, GoodputPerS: 139.8, RateLimitedShare: 0.071},
		{Cap: 128, P50Ms: 1150, P95Ms: results.Unanswered, AnsweredShare: 0.91, GoodputPerS: 128.3, RateLimitedShare: 0.164},
	}
}
