package calibrate

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/simbench/simbench/internal/atomicfile"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/trace"
)

// Result is what a calibration found: the figures a scenario is written
// from, each with where it came from.
type Result struct {
	// Sources are the traces read, in order.
	Sources []Source
	// Records is the number of attempts read.
	Records int64
	// Duration is the time the traces cover, in seconds: from the earliest
	// intended start to the latest end.
	Duration float64
	// Services in order of name.
	Services []ServiceFit
	// Tools in order of name.
	Tools []ToolFit
	// Workload describes the turns.
	Workload WorkloadFit
	// MeanInFlight is the attempts in flight on average over Duration
	// (Little's law: the sum of attempt durations over Duration).
	MeanInFlight float64
	// Retries counts attempts after a call's first.
	Retries int64
	// MaxAttempt is the most attempts any call made.
	MaxAttempt int
}

// ServiceFit holds one service's figures.
type ServiceFit struct {
	// Name is the service's name in the scenario: its name in the traces
	// when that is a safe name (atomicfile.SafeName), else a slug of it;
	// TraceName is then the name in the traces ("" when unchanged).
	Name, TraceName string
	// Attempts counts the attempts; Outcomes counts them by class, indexed
	// by sched.Class (the order of trace.Outcomes).
	Attempts int64
	Outcomes [classCount]int64
	// Latency is the lognormal fit to the durations of the successful
	// attempts, in seconds; P50 and P95 are the sample's own percentiles.
	Latency  LognormalFit
	P50, P95 float64
	// ErrorRate is the transient failures' share of the answered attempts
	// (all but the 429s, 529s and cancels without a status).
	ErrorRate float64
	// RateLimitedShare and OverloadedShare are the 429s' and 529s'
	// shares of all attempts.
	RateLimitedShare, OverloadedShare float64
	// Limits are the service's limits as far as the traces tell, and
	// LimitSource says how they were found ("" when unknown).
	Limits      trace.Limits
	LimitSource string
	// Headers is the scenario's headers value the traces suggest:
	// "openai" when responses announced limits, "standard" when they gave
	// retry delays, else "none".
	Headers string

	latency *sample
}

// ToolFit holds one tool's figures.
type ToolFit struct {
	// Name and TraceName are as ServiceFit's.
	Name, TraceName string
	// Service is the service most of its calls went to; Services counts
	// the services it used.
	Service  string
	Services int
	// Calls counts its calls (first attempts).
	Calls int64
	// TokensMean and TokensStd describe its tokens per call.
	TokensMean, TokensStd float64
}

// WorkloadFit describes the turns and how they begin.
type WorkloadFit struct {
	// Turns counts the turns seen.
	Turns int64
	// Closed says the closed model (sessions looping turns) fits the
	// traces; ModelReason says why one model was chosen.
	Closed      bool
	ModelReason string
	// Closed model: Sessions running at once, TurnsPerSession (0: until
	// the run ends), the sessions seen and their mean turns, why Sessions
	// and TurnsPerSession were read as they were (SessionsReason), and the
	// think time between a session's turns, in seconds.
	Sessions            int
	TurnsPerSession     int
	SessionsSeen        int64
	MeanTurnsPerSession float64
	SessionsReason      string
	Think               LognormalFit
	ThinkZero           bool // every gap was 0: no think time
	// Open model: ArrivalRate in turns per second, Arrival "poisson" or
	// "constant", and ArrivalCV, the coefficient of variation of the gaps
	// between turn starts that decided it (1 for Poisson, 0 for constant).
	ArrivalRate float64
	Arrival     string
	ArrivalCV   float64
	// FanOut is tool calls per turn: its mean, least and most.
	FanOutMean           float64
	FanOutMin, FanOutMax int
	// ModelTurnShare is the share of turns with a model call; ModelCalls
	// counts them, ModelService is the service most went to, and
	// ModelTokensMean and ModelTokensStd describe their tokens.
	ModelTurnShare                  float64
	ModelCalls                      int64
	ModelService                    string
	ModelTokensMean, ModelTokensStd float64
	// Clamped says, one line each, which figures were brought within the
	// scenario bounds, from what (written as comments).
	Clamped []string

	think, fanOut *sample
}

// clamp brings the workload's figures within what a scenario holds
// (scenarios.MaxSessions, MaxTurns, MaxCallsAtOnce, MaxArrivalRate,
// MinRatePerHour), noting each change in Clamped.
func (w *WorkloadFit) clamp() {
	note := func(format string, args ...any) { w.Clamped = append(w.Clamped, fmt.Sprintf(format, args...)) }
	if w.Closed {
		perTurn := max(1, w.FanOutMax+1) // the calls and the model call of a turn
		if most := min(scenarios.MaxSessions, scenarios.MaxCallsAtOnce/perTurn); w.Sessions > most {
			note("sessions: %d in the traces, lowered to %d, the most a scenario runs with up to %d calls per turn", w.Sessions, most, perTurn)
			w.Sessions = most
		}
		if w.TurnsPerSession > scenarios.MaxTurns {
			note("turns: %d per session in the traces, lowered to %d, the most a scenario runs", w.TurnsPerSession, scenarios.MaxTurns)
			w.TurnsPerSession = scenarios.MaxTurns
		}
		return
	}
	switch lo := scenarios.MinRatePerHour / 3600.0; {
	case w.ArrivalRate > scenarios.MaxArrivalRate:
		note("arrival_rate: %g turns/s in the traces, lowered to %d, the most a scenario runs", w.ArrivalRate, scenarios.MaxArrivalRate)
		w.ArrivalRate = scenarios.MaxArrivalRate
	case w.ArrivalRate < lo:
		note("arrival_rate: %g turns/s in the traces, raised to one an hour, the slowest rate a scenario runs", w.ArrivalRate)
		w.ArrivalRate = lo
	}
}

// Fit closes every open turn and fits the figures. It fails when nothing
// was added. The Calibrator can take more traces afterwards and Fit again.
func (c *Calibrator) Fit() (*Result, error) {
	if c.records == 0 {
		return nil, ErrEmpty
	}
	c.finish()
	r := &Result{
		Sources: slices.Clone(c.sources), Records: c.records,
		Duration: max(c.latest-c.first, 1e-3),
		Retries:  c.retries, MaxAttempt: c.maxAttempt,
	}
	r.MeanInFlight = c.busy / r.Duration
	names := namer{}
	for _, name := range slices.Sorted(maps.Keys(c.services)) {
		f := c.fitService(c.services[name], r.Duration)
		f.Name, f.TraceName = names.of("service", name)
		r.Services = append(r.Services, f)
	}
	for _, name := range slices.Sorted(maps.Keys(c.tools)) {
		t := c.tools[name]
		tf := ToolFit{Calls: t.calls, Services: len(t.service), TokensMean: t.tokens.mean, TokensStd: t.tokens.stddev()}
		tf.Name, tf.TraceName = names.of("tool", name)
		byName := map[string]int64{}
		for s, n := range t.service {
			byName[s.name] = n
		}
		tf.Service, _ = names.of("service", mostCommon(byName))
		r.Tools = append(r.Tools, tf)
	}
	r.Workload = c.fitWorkload(r.Duration)
	r.Workload.clamp()
	if r.Workload.ModelService != "" {
		r.Workload.ModelService, _ = names.of("service", r.Workload.ModelService)
	}
	slices.SortFunc(r.Services, func(a, b ServiceFit) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(r.Tools, func(a, b ToolFit) int { return cmp.Compare(a.Name, b.Name) })
	if err := names.collision(); err != nil {
		return nil, err
	}
	if len(r.Tools) == 0 && r.Workload.ModelCalls == 0 {
		return nil, fmt.Errorf("calibrate: %w: every attempt is a retry (attempt 2 or later), so nothing says what a turn calls", ErrEmpty)
	}
	return r, nil
}

// namer maps names from the traces to names a scenario can hold
// (atomicfile.SafeName: names that are safe already stay as they are),
// and notices when two names of one kind map to the same one.
type namer struct {
	seen map[[2]string]string // kind and scenario name → trace name
	err  error
}

// of returns the scenario name for a trace name of kind ("service",
// "tool"), and the trace name when it had to change ("" otherwise).
func (n *namer) of(kind, name string) (string, string) {
	safe := atomicfile.SafeName(name)
	if n.seen == nil {
		n.seen = map[[2]string]string{}
	}
	k := [2]string{kind, safe}
	if prev, ok := n.seen[k]; ok && prev != name && n.err == nil {
		n.err = fmt.Errorf("calibrate: the %ss %q and %q both map to %q in the scenario; rename one in the traces", kind, prev, name, safe)
	}
	n.seen[k] = name
	if safe == name {
		return name, ""
	}
	return safe, name
}

func (n *namer) collision() error { return n.err }

func (c *Calibrator) fitService(s *serviceAcc, duration float64) ServiceFit {
	f := ServiceFit{Name: s.name, Attempts: s.attempts, Outcomes: s.outcomes, latency: s.latency}
	f.Latency = s.latency.lognormal(c.opts.KSMax)
	f.P50, f.P95 = s.latency.quantile(0.5), s.latency.quantile(0.95)
	o := s.outcomes
	answered := s.attempts - o[sched.ClassRateLimited] - o[sched.ClassOverloaded] - o[sched.ClassCancelled]
	if answered > 0 {
		f.ErrorRate = float64(o[sched.ClassTransient]) / float64(answered)
	}
	f.RateLimitedShare = float64(o[sched.ClassRateLimited]) / float64(s.attempts)
	f.OverloadedShare = float64(o[sched.ClassOverloaded]) / float64(s.attempts)
	switch {
	case s.limitReq > 0 || s.limitTok > 0:
		f.Limits = trace.Limits{RPM: s.limitReq, TPM: s.limitTok}
		f.LimitSource = "from the x-ratelimit-limit-* values the responses carried"
		f.Headers = "openai"
	case s.limits != (trace.Limits{}):
		f.Limits = s.limits
		f.LimitSource = "from the trace header"
	case s.limited > 0:
		f.Limits = trace.Limits{RPM: peakPerMinute(s.perSecond)}
		f.LimitSource = "inferred: no limits were recorded, but 429s show the limit was reached, so rpm is the most requests answered in any 60 s"
	}
	if f.Headers == "" {
		f.Headers = "none"
		if s.retryHdr {
			f.Headers = "standard"
		}
	}
	return f
}

// peakPerMinute is the most requests in any 60 consecutive whole seconds.
func peakPerMinute(perSecond map[int64]int32) float64 {
	secs := slices.Sorted(maps.Keys(perSecond))
	var best, sum int64
	lo := 0
	for _, s := range secs {
		sum += int64(perSecond[s])
		for secs[lo] <= s-60 {
			sum -= int64(perSecond[secs[lo]])
			lo++
		}
		best = max(best, sum)
	}
	return float64(best)
}

func (c *Calibrator) fitWorkload(duration float64) WorkloadFit {
	w := WorkloadFit{Turns: c.nTurns, think: c.think, fanOut: c.fanOut}
	w.FanOutMean = c.fanOut.mean
	w.FanOutMin, w.FanOutMax = int(c.fanOut.min), int(c.fanOut.max)
	w.ModelCalls = c.modelCalls
	if c.nTurns > 0 {
		w.ModelTurnShare = float64(c.modelTurns) / float64(c.nTurns)
	}
	w.ModelService = mostCommon(c.modelService)
	w.ModelTokensMean, w.ModelTokensStd = c.modelTokens.mean, c.modelTokens.stddev()
	w.SessionsSeen = c.nSessions
	w.MeanTurnsPerSession = c.sessionTurns.mean
	w.Closed = c.nSessions > 0 && w.MeanTurnsPerSession >= 1.5
	if w.Closed {
		w.ModelReason = "closed model: turns come in sessions (a session id on the records) of several turns each, each turn starting after the session's previous one ended"
		w.Think = c.think.lognormal(c.opts.KSMax)
		w.ThinkZero = c.think.max <= 0
		spread := c.sessionStart.quantile(0.9) - c.sessionStart.min
		meanSpan := c.sessionSpan / float64(c.nSessions)
		switch {
		case spread <= 0.1*duration && meanSpan >= 0.9*duration:
			w.Sessions, w.TurnsPerSession = int(c.nSessions), 0
			w.SessionsReason = "every session started near the beginning and kept going to the end: sessions run until the duration ends"
		case spread <= 0.1*duration:
			w.Sessions, w.TurnsPerSession = int(c.nSessions), max(1, int(math.Round(w.MeanTurnsPerSession)))
			w.SessionsReason = "every session started near the beginning and stopped after its turns: turns is the mean turns per session"
		default:
			w.Sessions = max(1, int(math.Round(c.sessionSpan/duration)))
			w.SessionsReason = "sessions came and went: sessions is how many were active on average (their total span over the duration), each running until the duration ends"
		}
		return w
	}
	w.ModelReason = "open model: turns do not come in sessions of several turns"
	if c.nSessions > 0 {
		w.ModelReason += " (sessions averaged fewer than 1.5 turns)"
	} else {
		w.ModelReason += " (no session ids on the records)"
	}
	w.ArrivalRate = float64(c.nTurns) / duration
	w.Arrival = "poisson"
	if c.arrivals.n > 1 && c.arrivals.mean > 0 {
		w.ArrivalCV = c.arrivals.stddev() / c.arrivals.mean
		if w.ArrivalCV < 0.2 {
			w.Arrival = "constant"
		}
	}
	return w
}

// mostCommon returns the key with the largest count, the first by name
// among equals.
func mostCommon(m map[string]int64) string {
	best := ""
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if best == "" || m[k] > m[best] {
			best = k
		}
	}
	return best
}
