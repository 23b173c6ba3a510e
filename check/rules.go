package check

import (
	"fmt"
	"time"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// Defaults of the rules, used where the scenario's [check] table is
// silent.
const (
	// DefaultRateLimitedWarn and DefaultRateLimitedFail bound the share of a
	// client's attempts to a service answered 429: a client that paces
	// itself meets few, one that does not meets many.
	DefaultRateLimitedWarn = 0.01
	DefaultRateLimitedFail = 0.10
	// DefaultEarlyRetries is the most retries sent before the delay the
	// server gave: none.
	DefaultEarlyRetries = 0
	// DefaultJitterWindow groups 429s answered to one client within it into
	// one shared 429, whose retries should spread.
	DefaultJitterWindow = 100 * time.Millisecond
	// DefaultJitterMinSpread and DefaultJitterMinShare bound the least
	// spread (p10 to p90) of the retries after a shared 429 from below: it
	// is the largest of 20 ms, a tenth of their median delay and the time
	// the service's request limit takes to admit them. Retries at once, or
	// all at the delay the server gave, spread over less.
	DefaultJitterMinSpread = 20 * time.Millisecond
	DefaultJitterMinShare  = 0.1
	// DefaultAttemptsWarn and DefaultAttemptsFail bound the attempts of one
	// logical call: the OpenAI SDKs make 3, an agent's 5 retries of an
	// SDK's 3 make 15.
	DefaultAttemptsWarn = 5
	DefaultAttemptsFail = 10
	// DefaultAbandoned is the most attempts a client may leave running on
	// the server while it retries them: none (cancellation should reach
	// the transport).
	DefaultAbandoned = 0
	// DefaultAbandonGrace is how long a client may keep an attempt's
	// connection open after sending its retry before the attempt counts
	// as abandoned: a client that cancels and retries at once has its
	// retry reach the server before its disconnect does.
	DefaultAbandonGrace = 250 * time.Millisecond
	// DefaultRetryGap is the least time after an attempt still being
	// served that an identical attempt which declares nothing is taken
	// for its retry (sent when a timeout gave it up); identical attempts
	// sent closer together are parallel calls of a fan-out, whose last
	// may leave a loaded process well after its first (the OpenAI Agents
	// SDK's 8 identical lookups, under the race detector on a busy
	// machine, came more than 100 ms apart). A timeout of a second or
	// more is what a tool call gets.
	DefaultRetryGap = time.Second
	// DefaultNonRetryable is the most retries of answers no retry can
	// change (see nonRetryable): none.
	DefaultNonRetryable = 0
	// DefaultAnswerGapWarn and DefaultAnswerGapFail bound the p95 time
	// between one model answer to a client and the next.
	DefaultAnswerGapWarn = 30 * time.Second
	DefaultAnswerGapFail = 2 * time.Minute
)

// Rules are what a client is graded by. Build them with RulesFor; the
// zero value has no caps and zero bounds, and fails everything.
type Rules struct {
	// MaxInFlight caps one client's attempts in flight per service; a
	// service not in it is not capped. CapSource says where each cap came
	// from, for the line's rule.
	MaxInFlight map[string]int
	CapSource   map[string]string
	// RequestRate is each planned service's binding request limit, in
	// requests per second: a herd of n retries needs n ÷ RequestRate to
	// be admitted, the least spread that does not meet the limit again.
	RequestRate map[string]float64
	// RateLimitedWarn and RateLimitedFail bound the share of attempts
	// answered 429.
	RateLimitedWarn, RateLimitedFail float64
	// EarlyRetries is the most retries sent before their delay elapsed.
	EarlyRetries int
	// JitterWindow, JitterMinSpread and JitterMinShare: see the defaults.
	JitterWindow, JitterMinSpread time.Duration
	JitterMinShare                float64
	// AttemptsWarn and AttemptsFail bound the attempts of one call.
	AttemptsWarn, AttemptsFail int
	// Abandoned is the most attempts left running on the server while
	// their call was retried.
	Abandoned int
	// AbandonGrace is how long after its retry's arrival an attempt's
	// connection may stay open before the attempt counts as abandoned;
	// RetryGap the least time after a running attempt that an undeclared
	// identical one is its retry (see the defaults).
	AbandonGrace, RetryGap time.Duration
	// AttemptTimeout is the per-attempt timeout a client should give an
	// attempt up at: [check] attempt_timeout, else the attempt_timeout of
	// the strategy the decision tuned, else of the strategy the scenario
	// tunes (0: none, not graded).
	AttemptTimeout time.Duration
	// NonRetryable is the most retries of answers that no retry can
	// change: a spent credit, a context too long, a malformed, refused or
	// oversized request.
	NonRetryable int
	// AnswerGapWarn and AnswerGapFail bound the p95 time between model
	// answers.
	AnswerGapWarn, AnswerGapFail time.Duration
	// Daily holds the services with a daily quota (rpd or tpd), each
	// graded by dailyQuota.
	Daily map[string]bool
}

// RulesFor returns the rules of scenario sc: its [check] table over the
// defaults; a service's in-flight cap defaults to the cap decision d sets
// on it (decision.Settings, what `simbench recommend --emit` prints), and
// where d is nil or sets none, to its Little's-law cap at the headroom of
// the strategy the scenario tunes.
func RulesFor(sc *scenarios.Scenario, d *decision.Result) Rules {
	c := sc.Check
	r := Rules{
		MaxInFlight: map[string]int{}, CapSource: map[string]string{}, RequestRate: map[string]float64{},
		RateLimitedWarn: or(c.RateLimitedWarn, DefaultRateLimitedWarn), RateLimitedFail: or(c.RateLimitedFail, DefaultRateLimitedFail),
		EarlyRetries: DefaultEarlyRetries, Abandoned: DefaultAbandoned, NonRetryable: DefaultNonRetryable,
		AbandonGrace: DefaultAbandonGrace, RetryGap: DefaultRetryGap,
		JitterWindow: or(c.JitterWindow, DefaultJitterWindow), JitterMinSpread: or(c.JitterMinSpread, DefaultJitterMinSpread),
		JitterMinShare: or(c.JitterMinShare, DefaultJitterMinShare),
		AttemptsWarn:   or(c.AttemptsWarn, DefaultAttemptsWarn), AttemptsFail: or(c.AttemptsFail, DefaultAttemptsFail),
		AnswerGapWarn: or(c.AnswerGapWarn, DefaultAnswerGapWarn), AnswerGapFail: or(c.AnswerGapFail, DefaultAnswerGapFail),
	}
	if c.HasEarlyRetries {
		r.EarlyRetries = c.EarlyRetries
	}
	if c.HasAbandoned {
		r.Abandoned = c.Abandoned
	}
	if c.AttemptTimeout > 0 {
		r.AttemptTimeout = c.AttemptTimeout
	}
	if c.HasNonRetryable {
		r.NonRetryable = c.NonRetryable
	}
	// A bound set on one side only must not leave the other past it.
	r.RateLimitedWarn = min(r.RateLimitedWarn, r.RateLimitedFail)
	r.AttemptsWarn = min(r.AttemptsWarn, r.AttemptsFail)
	r.AnswerGapWarn = min(r.AnswerGapWarn, r.AnswerGapFail)

	var headroom float64
	if st := sc.Strategy(sim.SweepStrategy(sc)); st != nil {
		headroom = st.Headroom
		if r.AttemptTimeout == 0 {
			r.AttemptTimeout = st.AttemptTimeout
		}
	}
	plans, _ := decision.PlanServices(sc, headroom)
	for _, p := range plans {
		r.MaxInFlight[p.Service.Name] = p.MaxInFlight
		r.RequestRate[p.Service.Name] = p.BindingRPM / 60
		r.CapSource[p.Service.Name] = fmt.Sprintf("the Little's-law cap at headroom %g; no decision was simulated", p.Service.Headroom)
	}
	if d != nil {
		// The decision is the one answer: a service it leaves uncapped
		// is not graded by the arithmetic's cap either.
		if c.AttemptTimeout == 0 {
			r.AttemptTimeout = d.Tuned.AttemptTimeout
		}
		set := decision.Settings(sc, d)
		for _, svc := range sc.Services {
			s := set[svc.Name]
			if s.MaxInFlight <= 0 {
				delete(r.MaxInFlight, svc.Name)
				r.CapSource[svc.Name] = fmt.Sprintf("simbench recommend sets none on %s (strategy %s); set [check] max_in_flight to grade one", svc.Name, d.Tuned.Name)
				continue
			}
			r.MaxInFlight[svc.Name] = s.MaxInFlight
			r.CapSource[svc.Name] = decidedSource(sc, d.Tuned.Name, svc.Name, s)
		}
	}
	for _, svc := range sc.Services {
		if svc.Daily.Enabled() {
			if r.Daily == nil {
				r.Daily = map[string]bool{}
			}
			r.Daily[svc.Name] = true
		}
		n, src := c.MaxInFlight[svc.Name], "[check] max_in_flight."+svc.Name
		if n == 0 {
			n, src = c.AllMaxInFlight, "[check] max_in_flight"
		}
		if n > 0 {
			r.MaxInFlight[svc.Name], r.CapSource[svc.Name] = n, src
		}
	}
	return r
}

// decidedSource says where a decided cap comes from: the strategy tuned,
// its pace on the service in the unit of the service's file, and the
// arithmetic's cap beside it.
func decidedSource(sc *scenarios.Scenario, strategy, service string, set decision.Setting) string {
	s := "the cap simbench recommend --emit sets, strategy " + strategy
	if set.PaceRPM > 0 {
		s += " paced at " + decision.RateText(sc.Service(service), set.PaceRPM)
	}
	if set.ArithmeticCap > 0 {
		s += fmt.Sprintf("; the Little's-law arithmetic alone gives %d at headroom %g", set.ArithmeticCap, set.Headroom)
	}
	return s
}

// or is v, or def when v is zero.
func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
