package sched

import (
	"fmt"

	"github.com/simbench/simbench/sched/internal/adaptive"
	"github.com/simbench/simbench/sched/internal/vocab"
)

// Algorithm picks how an adaptive concurrency limit moves.
type Algorithm uint8

const (
	// AlgorithmAIMD is additive increase, multiplicative decrease driven by
	// rate-limit answers, as TCP congestion control is driven by losses: the
	// limit grows by one per round trip (per limit successful completions)
	// and is cut by AdaptiveConfig.Backoff on a 429 or an overload answer, at
	// most once per round trip.
	AlgorithmAIMD Algorithm = iota + 1
	// AlgorithmGradient follows the ratio of a long-term to a short-term
	// round-trip time, the idea of TCP Vegas (Brakmo and Peterson, 1994) as
	// used by Netflix's concurrency-limits library in its Gradient2 limit:
	// when requests take longer than they used to, a queue is building at
	// the server and the limit shrinks in proportion; when they take no
	// longer, the limit grows by a queue allowance. Each completion computes
	//
	//	gradient = clamp(Tolerance × long ÷ short, 0.5, 1)
	//	target   = limit × gradient + QueueSize
	//	limit    = (1 − Smoothing) × limit + Smoothing × target
	//
	// where short is the completion's round-trip time and long an
	// exponentially smoothed average over about LongWindow completions
	// (plain mean while fewer have been seen). When long exceeds twice
	// short, long decays towards short (×0.95), so the limit recovers after
	// a long spell of high latency. The limit does not grow while fewer
	// than half of it are in flight (the demand, not the server, is what
	// limits). Unlike Gradient2, a 429 or overload answer is not a latency
	// sample: it cuts the limit by Backoff at most once per round trip, as
	// in AIMD, since a fast refusal would otherwise look like a quick server.
	// After such a cut the limit grows past the level it was cut to by at
	// most one per round trip (one ÷ limit per completion), as AIMD's does
	// and as TCP grows above its slow-start threshold: a rate limit refuses
	// at once and gives no latency warning, so the growth allowance, which
	// adds about QueueSize × Smoothing per completion and so a multiple of
	// the limit per round trip, would bring the limit back above what the
	// server admits within a round trip or two and meet the next 429 there.
	// Below that level (a cut for latency) it grows back as before.
	AlgorithmGradient
)

var algorithms = vocab.Vocab[Algorithm]{What: "adaptive algorithm", Names: []string{"", "aimd", "gradient"}}

// String returns the algorithm's name as written in scenario files.
func (a Algorithm) String() string { return algorithms.Name(a) }

// ParseAlgorithm returns the algorithm named s (as String prints it).
func ParseAlgorithm(s string) (Algorithm, error) { return algorithms.Parse(s) }

// Algorithms returns every adaptive algorithm, in order.
func Algorithms() []Algorithm { return algorithms.Choices() }

// MarshalText returns the algorithm's name (encoding.TextMarshaler); the
// zero Algorithm, which names none, is an error.
func (a Algorithm) MarshalText() ([]byte, error) { return algorithms.Marshal(a) }

// UnmarshalText sets a to the algorithm text names (encoding.TextUnmarshaler).
func (a *Algorithm) UnmarshalText(text []byte) error { return algorithms.Unmarshal(a, text) }

// Defaults of AdaptiveConfig's zero fields.
const (
	// DefaultAdaptiveInitial is the starting limit, in attempts in flight.
	DefaultAdaptiveInitial = 8
	// DefaultAdaptiveMin is the floor of the limit, in attempts in flight.
	DefaultAdaptiveMin = 1
	// DefaultAdaptiveMax is the ceiling when neither Max nor a static cap is set.
	DefaultAdaptiveMax = 1000
	// DefaultAdaptiveBackoff is the factor a rate-limit answer multiplies the limit by.
	DefaultAdaptiveBackoff = 0.5
	// DefaultGradientSmoothing is the weight of each new target in the gradient limit.
	DefaultGradientSmoothing = 0.2
	// DefaultGradientTolerance is the latency ratio tolerated before the gradient limit shrinks.
	DefaultGradientTolerance = 1.5
	// DefaultGradientLongWindow is the long-term RTT average's length, in completions.
	DefaultGradientLongWindow = 600
	// DefaultGradientQueueSize is the growth allowance per update, in attempts.
	DefaultGradientQueueSize = 4
)

// AdaptiveConfig makes a service's concurrency limit follow what the service
// answers instead of staying fixed. The limit starts at Initial and stays in
// [Min, Max]; Max is further capped by the static caps (the service's
// MaxInFlight and Config.MaxInFlight), so an adaptive limit never lets more
// attempts run than a static one would. Zero fields take the defaults above.
//
// The limit moves only on completions the Core already sees, at the times the
// driver gives, so it is as deterministic as the rest of the Core.
type AdaptiveConfig struct {
	// Algorithm is AlgorithmAIMD or AlgorithmGradient.
	Algorithm Algorithm
	// Initial, Min and Max bound the limit, in attempts in flight.
	Initial, Min, Max int
	// Backoff is the factor a 429 or overload answer multiplies the limit by,
	// in (0, 1) (0: DefaultAdaptiveBackoff).
	Backoff float64
	// Smoothing is the gradient limit's weight of each new target, in (0, 1]
	// (0: DefaultGradientSmoothing). Gradient only.
	Smoothing float64
	// Tolerance is the ratio of short- to long-term latency that the gradient
	// limit accepts before it shrinks, at least 1 (0: DefaultGradientTolerance).
	// Gradient only.
	Tolerance float64
	// LongWindow is the long-term latency average's length, in completions
	// (0: DefaultGradientLongWindow). Gradient only.
	LongWindow int
	// QueueSize is the gradient limit's growth allowance per completion, in
	// attempts (0: DefaultGradientQueueSize). Gradient only.
	QueueSize float64
}

func (a *AdaptiveConfig) validate() error {
	switch {
	case a.Algorithm != AlgorithmAIMD && a.Algorithm != AlgorithmGradient:
		return fmt.Errorf("unknown adaptive algorithm %d", a.Algorithm)
	case a.Initial < 0 || a.Min < 0 || a.Max < 0 || a.LongWindow < 0 || a.QueueSize < 0:
		return fmt.Errorf("negative adaptive setting")
	case a.Min > 0 && a.Max > 0 && a.Min > a.Max:
		return fmt.Errorf("adaptive min %d above max %d", a.Min, a.Max)
	case a.Backoff < 0 || a.Backoff >= 1:
		return fmt.Errorf("adaptive backoff %v outside (0, 1)", a.Backoff)
	case a.Smoothing < 0 || a.Smoothing > 1:
		return fmt.Errorf("adaptive smoothing %v outside (0, 1]", a.Smoothing)
	case a.Tolerance != 0 && a.Tolerance < 1:
		return fmt.Errorf("adaptive tolerance %v below 1", a.Tolerance)
	}
	return nil
}

// newLimiter builds the limiter for a, with its ceiling lowered to static
// (0: none) and a's zero fields at their defaults.
func newLimiter(a *AdaptiveConfig, static int) *adaptive.Limiter {
	lo, hi := limiterBounds(a, static)
	p := adaptive.Params{
		Gradient:   a.Algorithm == AlgorithmGradient,
		Backoff:    orFloat(a.Backoff, DefaultAdaptiveBackoff),
		Smoothing:  orFloat(a.Smoothing, DefaultGradientSmoothing),
		Tolerance:  orFloat(a.Tolerance, DefaultGradientTolerance),
		LongWindow: orInt(a.LongWindow, DefaultGradientLongWindow),
		QueueSize:  orFloat(a.QueueSize, DefaultGradientQueueSize),
	}
	return adaptive.New(p, orInt(a.Initial, DefaultAdaptiveInitial), lo, hi)
}

// limiterBounds returns the bounds of a's limit: Min and Max, and static
// (0: none) as a further ceiling.
func limiterBounds(a *AdaptiveConfig, static int) (lo, hi int) {
	hi = orInt(a.Max, DefaultAdaptiveMax)
	if static > 0 {
		hi = min(hi, static)
	}
	return min(orInt(a.Min, DefaultAdaptiveMin), hi), hi
}

func orFloat(v, d float64) float64 {
	if v > 0 {
		return v
	}
	return d
}

func orInt(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

// Limit returns the concurrency limit in force for the named service, in
// attempts in flight: its adaptive limit when it has one (already bounded by
// the static caps), else the smaller of its MaxInFlight and
// Config.MaxInFlight (0: unbounded).
func (c *Core) Limit(service string) int {
	if s, ok := c.services[service]; ok && s.lim != nil {
		return s.lim.Cap()
	}
	svc, global := c.cfg.Services[service].MaxInFlight, c.cfg.MaxInFlight
	if svc > 0 && (global == 0 || svc < global) {
		return svc
	}
	return global
}

// adapt feeds a completed attempt to its service's adaptive limit and
// announces a change of the cap in force.
func (c *Core) adapt(cs *callState, class Class) {
	s := cs.svc
	switch class {
	case ClassRateLimited, ClassOverloaded:
		s.lim.Refused(c.now, cs.runSince)
	case ClassSuccess:
		s.lim.Succeeded(c.now, cs.runSince, s.inFlight)
	}
	s.maxIn = s.lim.Cap()
	if s.maxIn == s.lim.LastReport {
		return
	}
	s.lim.LastReport = s.maxIn
	if c.cfg.Hook != nil {
		c.emit(Event{Kind: EventLimit, Service: s.name, N: s.maxIn, Class: class})
	}
}
