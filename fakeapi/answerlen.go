package fakeapi

import (
	"math"
	"math/rand/v2"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// How long the fake model's answers are: a text answer's length is drawn,
// a tool-call answer's follows from its calls, and either is capped at the
// request's max_tokens, as a model's answer is.

// DefaultAnswerTokens is the distribution of a text answer's output tokens
// when AgentConfig.Answer is unset: lognormal, median 200, p95 1,000,
// before the cap of the request's max_tokens.
var DefaultAnswerTokens = spec.Dist[float64]{Kind: spec.DistLognormal, P50: 200, P95: 1000}

// defaultAnswer draws from DefaultAnswerTokens (a Sampler may be shared).
var defaultAnswer = spec.NewSampler(DefaultAnswerTokens)

// answerTokens returns the output tokens of the answer r to req, at most
// limit (the request's max_tokens or its default; at least 1): a tool-call
// answer's serialized calls (wire.ToolCallTokens), a text answer's drawn from
// a.Answer with a stream of the conversation's round, so that a
// conversation replays alike for a seed, and at most maxAnswerPieces (the
// text answer is that many pieces, one per token). cut reports a text
// answer cut at limit: the drawn length was longer.
func answerTokens(a *AgentConfig, seed uint64, req *wire.AgentRequest, r *wire.Reply, limit int64) (n int64, cut bool) {
	if limit <= 0 {
		return 0, len(r.Calls) == 0
	}
	if len(r.Calls) > 0 {
		return max(1, min(wire.ToolCallTokens(r.Calls), limit)), false
	}
	s := defaultAnswer
	if a.Answer.Kind != "" {
		s = spec.NewSampler(a.Answer)
	}
	rng := rand.New(rand.NewPCG(seed^0x6a09e667f3bcc909^uint64(req.Round), req.Conv))
	drawn := math.Round(s.Draw(rng))
	return int64(max(1, min(drawn, float64(limit), wire.MaxAnswerPieces))), drawn > float64(limit)
}
