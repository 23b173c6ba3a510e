package decision

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/results"
)

// DefaultHeadroom is the fraction of the binding limit a plan uses when
// Service.Headroom is zero; the rest is reserved for retries. It is the
// default recommend's --headroom help names (a fraction in (0, 1]).
const DefaultHeadroom = 0.7

// DefaultMaxRateLimitedShare is the largest share of attempts answered with
// 429 (0.001 = 0.1%) that ChooseCap accepts for a cap, when callers want the
// default (results.DefaultMaxRateLimitedShare, which reports draw). It is
// the default of sweep's and recommend's --max-share (a fraction).
const DefaultMaxRateLimitedShare = results.DefaultMaxRateLimitedShare

// Names of the limit that binds, as in results.Recommendation.BindingLimit.
const (
	LimitRPM         = "rpm"
	LimitRPS         = "rps" // the request limit, when the file wrote it per second
	LimitTPM         = "tpm"
	LimitConcurrency = "concurrency"
)

// floorSlack absorbs floating-point error before rounding down, so that a
// product that is 10 in exact arithmetic (50 requests/s × 0.2 s) does not
// come out as 9.999999999 and floor to 9.
const floorSlack = 1e-9

// Service describes one downstream service and the load an agent puts on it:
// the input of Recommend. The zero value is not valid: at least one limit,
// the mean latency and the calls per turn must be set.
type Service struct {
	// Name labels the arithmetic; it may be empty.
	Name string
	// RPM is the service's limit in requests per minute (0: no such limit).
	RPM float64
	// TPM is the service's limit in tokens per minute (0: no such limit).
	TPM float64
	// MaxConcurrent is the service's limit on requests in flight (0: none).
	MaxConcurrent int
	// TokensPerCall is the tokens one call consumes; required when TPM is set.
	TokensPerCall float64
	// MeanLatency is one call's mean service time.
	MeanLatency time.Duration
	// RoundTrip is one attempt's mean network time, there and back (0:
	// none). An attempt is in flight at the client for MeanLatency +
	// RoundTrip, so Little's law counts both.
	RoundTrip time.Duration
	// CallsPerTurn is the mean number of calls one agent turn makes to the service.
	CallsPerTurn float64
	// Headroom is the fraction of the binding limit to plan for, in (0, 1];
	// the remainder is reserved for retries. Zero means DefaultHeadroom.
	Headroom float64
	// PerSecond says the service's file wrote its request limit per second
	// (rps): RPM still holds it per minute, but the binding limit is named
	// LimitRPS and Lines answer request rates in requests/s.
	PerSecond bool
}

// Plan is the recommendation arithmetic for one service, as computed by
// Recommend. All rates are in requests per minute unless named otherwise.
type Plan struct {
	// Service is the input, with Headroom defaulted.
	Service Service
	// ByRPM, ByTPM and ByConcurrency are the request rates (requests/min)
	// each limit allows on its own: RPM; TPM ÷ tokens per call; max
	// concurrent ÷ mean latency × 60 (Little's law). Zero when the limit is not set.
	ByRPM, ByTPM, ByConcurrency float64
	// BindingLimit names the smallest of them: LimitRPM (LimitRPS when the
	// file wrote it per second), LimitTPM or LimitConcurrency.
	BindingLimit string
	// BindingRPM is the binding rate in requests/min, before headroom.
	BindingRPM float64
	// UsableRPM is BindingRPM × headroom: the request bucket's rate.
	UsableRPM float64
	// ReservedRPM is BindingRPM − UsableRPM: the requests/min kept for retries.
	ReservedRPM float64
	// UsableTPM is TPM × headroom, the token bucket's rate (0 without a TPM limit).
	UsableTPM float64
	// LittleCap is binding rate (requests/s) × headroom × time in flight
	// (mean latency + round trip, s), before rounding; MaxInFlight is its floor, but at least 1.
	LittleCap   float64
	MaxInFlight int
	// Turns is UsableRPM ÷ calls per turn before rounding; TurnsPerMinute is
	// its floor: the turns per minute the service sustains.
	Turns          float64
	TurnsPerMinute int
}

// Recommend computes the plan for one service: which limit binds, the
// request rate to use and to reserve, the Little's-law concurrency cap and
// the sustainable turns per minute. It is a pure function; it returns an
// error naming every problem with the input at once.
func Recommend(s Service) (Plan, error) {
	if s.Headroom == 0 {
		s.Headroom = DefaultHeadroom
	}
	var errs []error
	if s.RPM < 0 || s.TPM < 0 || s.MaxConcurrent < 0 {
		errs = append(errs, fmt.Errorf("decision: limits must not be negative (rpm %g, tpm %g, max concurrent %d)", s.RPM, s.TPM, s.MaxConcurrent))
	}
	if s.RPM <= 0 && s.TPM <= 0 && s.MaxConcurrent <= 0 {
		errs = append(errs, errors.New("decision: service has no rpm, tpm or concurrency limit"))
	}
	if s.TPM > 0 && s.TokensPerCall <= 0 {
		errs = append(errs, fmt.Errorf("decision: a tpm limit (%g) needs tokens per call > 0, have %g", s.TPM, s.TokensPerCall))
	}
	if s.RoundTrip < 0 {
		errs = append(errs, fmt.Errorf("decision: network round trip must not be negative, have %v", s.RoundTrip))
	}
	if s.MeanLatency <= 0 {
		errs = append(errs, fmt.Errorf("decision: mean latency must be > 0, have %v", s.MeanLatency))
	}
	if s.CallsPerTurn <= 0 {
		errs = append(errs, fmt.Errorf("decision: calls per turn must be > 0, have %g", s.CallsPerTurn))
	}
	if s.Headroom < 0 || s.Headroom > 1 {
		errs = append(errs, fmt.Errorf("decision: headroom must be in (0, 1], have %g", s.Headroom))
	}
	if len(errs) > 0 {
		return Plan{}, errors.Join(errs...)
	}

	p := Plan{Service: s}
	latencyS := s.MeanLatency.Seconds()
	if s.RPM > 0 {
		p.ByRPM = s.RPM
	}
	if s.TPM > 0 {
		p.ByTPM = s.TPM / s.TokensPerCall
		p.UsableTPM = s.TPM * s.Headroom
	}
	if s.MaxConcurrent > 0 {
		p.ByConcurrency = float64(s.MaxConcurrent) / latencyS * 60
	}
	// Ties go to the first limit in this order.
	for _, c := range []struct {
		name string
		rpm  float64
	}{{LimitRPM, p.ByRPM}, {LimitTPM, p.ByTPM}, {LimitConcurrency, p.ByConcurrency}} {
		if c.rpm > 0 && (p.BindingLimit == "" || c.rpm < p.BindingRPM) {
			p.BindingLimit, p.BindingRPM = c.name, c.rpm
		}
	}
	if p.BindingLimit == LimitRPM && s.PerSecond {
		p.BindingLimit = LimitRPS
	}
	p.UsableRPM = p.BindingRPM * s.Headroom
	p.ReservedRPM = p.BindingRPM - p.UsableRPM
	p.LittleCap = p.BindingRPM / 60 * s.Headroom * p.InFlightTime().Seconds()
	p.MaxInFlight = max(1, int(math.Floor(p.LittleCap+floorSlack)))
	p.Turns = p.UsableRPM / s.CallsPerTurn
	p.TurnsPerMinute = int(math.Floor(p.Turns + floorSlack))
	return p, nil
}

// InFlightTime is how long one attempt holds its place in the client's
// cap: the service time plus the network round trip.
func (p Plan) InFlightTime() time.Duration { return p.Service.MeanLatency + p.Service.RoundTrip }

// Lines shows the plan's arithmetic line by line, for terminals and reports.
func (p Plan) Lines() []string {
	s := p.Service
	var lines []string
	name := s.Name
	if name == "" {
		name = "service"
	}
	lines = append(lines, fmt.Sprintf("%s: limits %s", name, p.limitsText()))
	switch {
	case p.ByRPM > 0 && s.PerSecond:
		lines = append(lines, fmt.Sprintf("requests/s allowed by rps: %s", numfmt.Num(p.ByRPM/60)))
	case p.ByRPM > 0:
		lines = append(lines, fmt.Sprintf("requests/min allowed by rpm: %s", numfmt.Num(p.ByRPM)))
	}
	if p.ByTPM > 0 {
		lines = append(lines, fmt.Sprintf("requests/min allowed by tpm: %s tokens/min ÷ %s tokens/call = %s",
			numfmt.Num(s.TPM), numfmt.Num(s.TokensPerCall), numfmt.Num(p.ByTPM)))
	}
	if p.ByConcurrency > 0 {
		lines = append(lines, fmt.Sprintf("requests/min allowed by concurrency: %d in flight ÷ %s s × 60 = %s",
			s.MaxConcurrent, numfmt.Num(s.MeanLatency.Seconds()), numfmt.Num(p.ByConcurrency)))
	}
	// In the file's unit: per second when it wrote rps.
	unit, per := "requests/min", 1.0
	if s.PerSecond {
		unit, per = "requests/s", 60
	}
	lines = append(lines,
		fmt.Sprintf("binding limit: %s at %s %s", p.BindingLimit, numfmt.Num(p.BindingRPM/per), unit),
		fmt.Sprintf("usable with headroom %s: %s × %s = %s %s",
			numfmt.Num(s.Headroom), numfmt.Num(p.BindingRPM/per), numfmt.Num(s.Headroom), numfmt.Num(p.UsableRPM/per), unit),
		fmt.Sprintf("reserved for retries: %s − %s = %s %s",
			numfmt.Num(p.BindingRPM/per), numfmt.Num(p.UsableRPM/per), numfmt.Num(p.ReservedRPM/per), unit),
	)
	if s.RoundTrip > 0 {
		lines = append(lines, fmt.Sprintf("time in flight: %s s service + %s s network round trip = %s s",
			seconds(s.MeanLatency), seconds(s.RoundTrip), seconds(p.InFlightTime())))
	}
	capLine := fmt.Sprintf("Little's-law cap: floor(%s requests/s × %s × %s s) = floor(%s) = %s in flight",
		numfmt.Num(p.BindingRPM/60), numfmt.Num(s.Headroom), seconds(p.InFlightTime()), floorArg(p.LittleCap), numfmt.Num(float64(p.MaxInFlight)))
	if math.Floor(p.LittleCap+floorSlack) < 1 {
		capLine = fmt.Sprintf("Little's-law cap: %s requests/s × %s × %s s = %s, raised to 1 in flight",
			numfmt.Num(p.BindingRPM/60), numfmt.Num(s.Headroom), seconds(p.InFlightTime()), numfmt.Num(p.LittleCap))
	}
	usable := numfmt.Num(p.UsableRPM) + " requests/min"
	if s.PerSecond {
		usable = numfmt.Num(p.UsableRPM/60) + " requests/s × 60"
	}
	lines = append(lines, capLine,
		fmt.Sprintf("turns/min sustainable: floor(%s ÷ %s) = floor(%s) = %s",
			usable, numfmt.Counted(s.CallsPerTurn, "call/turn", "calls/turn"), floorArg(p.Turns), numfmt.Num(float64(p.TurnsPerMinute))))
	bucket := "token bucket: " + numfmt.Num(p.UsableRPM/per) + " " + unit
	if p.UsableTPM > 0 {
		bucket += fmt.Sprintf(", %s tokens/min", numfmt.Num(p.UsableTPM))
	}
	return append(lines, bucket)
}

// floorArg shows the argument of a floor to two decimals, cut rather than
// rounded, so that 50.999 reads 50.99 next to its floor of 50 rather than 51.
func floorArg(x float64) string {
	return numfmt.Num(math.Floor((x+floorSlack)*100) / 100)
}

// seconds shows a latency in seconds to the millisecond.
func seconds(d time.Duration) string { return numfmt.Fixed(d.Seconds(), 3, true) }

func (p Plan) limitsText() string {
	s := p.Service
	parts := ""
	add := func(t string) {
		if parts != "" {
			parts += ", "
		}
		parts += t
	}
	switch {
	case s.RPM > 0 && s.PerSecond:
		add(numfmt.Num(s.RPM/60) + " requests/s")
	case s.RPM > 0:
		add(numfmt.Num(s.RPM) + " requests/min")
	}
	if s.TPM > 0 {
		add(numfmt.Num(s.TPM) + " tokens/min")
	}
	if s.MaxConcurrent > 0 {
		add(fmt.Sprintf("%d in flight", s.MaxConcurrent))
	}
	return fmt.Sprintf("%s; %s ms mean latency, %s", parts, numfmt.Num(float64(s.MeanLatency)/float64(time.Millisecond)), numfmt.Counted(s.CallsPerTurn, "call/turn", "calls/turn"))
}

// Recommendation converts the plan to the results contract's form. Its
// Reason is the conclusion in one line, then the arithmetic of Lines, one
// step per line, so reports re-rendered from results.json can show it.
func (p Plan) Recommendation() results.Recommendation {
	reason := fmt.Sprintf("%s binds at %s; with headroom %s, Little's law gives %s in flight and %s turns/min",
		p.BindingLimit, numfmt.Rates(p.BindingRPM, 0, p.Service.PerSecond), numfmt.Num(p.Service.Headroom), numfmt.Num(float64(p.MaxInFlight)), numfmt.Num(float64(p.TurnsPerMinute)))
	return results.Recommendation{
		MaxInFlight:       p.MaxInFlight,
		BindingLimit:      p.BindingLimit,
		RequestsPerMinute: p.UsableRPM,
		TokensPerMinute:   p.UsableTPM,
		TurnsPerMinute:    float64(p.TurnsPerMinute),
		Reason:            reason + "\n" + strings.Join(p.Lines(), "\n"),
	}
}
