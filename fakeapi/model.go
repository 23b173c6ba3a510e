package fakeapi

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/simbench/simbench/sched/satmath"
)

// ID names one admitted request until Finish or Cancel. The zero ID is never
// issued: rejected requests carry it.
type ID uint64

// Kind is what the service does with a request.
type Kind uint8

// Kinds of decision. The first four and KindConflict are admissions (the
// request holds a concurrency slot until Finish or Cancel); the rest are
// immediate rejections.
const (
	// KindOK: a successful response after Latency.
	KindOK Kind = iota
	// KindServerError: a 5xx response after Latency.
	KindServerError
	// KindHang: no response ever; the driver calls Cancel when the client gives up.
	KindHang
	// KindReset: the connection is reset without a response after Latency.
	KindReset
	// KindRateLimited: 429 at once; Limit says which limit, RetryAfter what the client is told.
	KindRateLimited
	// KindOverloaded: 529 at once, during an overload episode.
	KindOverloaded
	// KindUnauthorized: 401 at once, the API key is missing or unknown.
	KindUnauthorized
	// KindTooLarge: 413 at once, the body or the token count can never be accepted.
	KindTooLarge
	// KindBadRequest: 400 at once, the body is malformed.
	KindBadRequest
	// KindConflict: a 409 after Latency; a write that arrived while another
	// write to its resource was in service lost the race to commit (see
	// FaultConfig.ConflictRate).
	KindConflict
	numKinds
)

var kindNames = [numKinds]string{"ok", "server_error", "hang", "reset", "rate_limited", "overloaded", "unauthorized", "too_large", "bad_request", "conflict"}

// String returns the kind's snake_case name, as used in Stats.Errors.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Limit names the limit that rejected a request.
type Limit uint8

// Limits.
const (
	// LimitNone: the decision was not a 429.
	LimitNone Limit = iota
	// LimitRPS: requests per second.
	LimitRPS
	// LimitRPM: requests per minute.
	LimitRPM
	// LimitTPM: tokens per minute.
	LimitTPM
	// LimitConcurrency: requests in flight.
	LimitConcurrency
	// LimitITPM: input tokens per minute (ServiceConfig.InputTPM).
	LimitITPM
	// LimitOTPM: output tokens per minute (ServiceConfig.OutputTPM).
	LimitOTPM
	numLimits
)

var limitNames = [numLimits]string{"none", "rps", "rpm", "tpm", "concurrency", "itpm", "otpm"}

// String returns the limit's name: "rps", "rpm", "tpm", "concurrency",
// "itpm", "otpm" or "none".
func (l Limit) String() string {
	if l < numLimits {
		return limitNames[l]
	}
	return fmt.Sprintf("limit(%d)", uint8(l))
}

// Request is one arrival at the service.
type Request struct {
	// Client tells clients apart for early-retry accounting; the server uses
	// the API key plus the x-simbench-client header. Requests with the same
	// Client share one retry deadline.
	Client string
	// Key is the API key; it must be one of ServiceConfig.Keys when those are set.
	Key string
	// Method and Path are the HTTP method and path (informational; Path is
	// the write resource when Resource is empty).
	Method, Path string
	// Resource names what a write modifies; "" means Path.
	Resource string
	// Tokens are the input tokens and OutputTokens the output tokens the
	// response will carry; both are charged against TPM at admission.
	Tokens, OutputTokens int64
	// Write marks a request that modifies Resource; overlapping writes to one
	// resource count as write races, or fail with 409 when the service
	// detects conflicts (FaultConfig.ConflictRate).
	Write bool
	// Bytes is the body size in bytes (413 past ServiceConfig.MaxBodyBytes).
	Bytes int64
	// Malformed marks a body that failed to decode (400).
	Malformed bool
	// Retry says what the client told about this request being a retry; the
	// zero value, RetryUnknown, keeps the rule of a client that sends one
	// request at a time (see Decision.EarlyRetry).
	Retry RetryMark
}

// RetryMark is what a request says about being a retry.
type RetryMark uint8

// Retry marks.
const (
	// RetryUnknown: nothing is known; any request from a client that was
	// told to wait, before its latest delay has elapsed, is an early retry.
	// Right for a client that sends one request at a time (the simulator's).
	RetryUnknown RetryMark = iota
	// RetryFresh: the client says this is a first attempt (such as
	// x-stainless-retry-count: 0); it is never an early retry.
	RetryFresh
	// RetryMarked: the client says this repeats an earlier request (such as
	// x-stainless-retry-count above 0). It is early when every rate-limited
	// request of its client still pending a retry was told to wait past now,
	// so parallel requests on one client that each honour their own delay
	// never count.
	RetryMarked
)

// Quota is what a rate-limit header reports about one limit.
type Quota struct {
	// Limit is the published limit per window; 0 means there is no such limit.
	Limit int64
	// Remaining is what could be admitted now.
	Remaining int64
	// Reset is how long until the limit is back to its initial state.
	Reset time.Duration
}

// Decision is what the service does with one request.
type Decision struct {
	// ID is non-zero for admissions (Kind OK, ServerError, Hang, Reset,
	// Conflict); the driver must later call Finish or Cancel with it.
	ID ID
	// Kind is what happens; Status the HTTP status the client sees (0 for
	// Hang and Reset, which send none).
	Kind   Kind
	Status int
	// Limit is the binding limit of a 429 (the one with the longest wait).
	Limit Limit
	// Wait is the exact time from arrival until the limiter would admit this
	// request (429), or until the overload episode ends (529).
	Wait time.Duration
	// RetryAfter is the delay the client is told, after the header style's
	// rounding (milliseconds for openai, seconds otherwise, rounded up) and
	// any lie; HasRetryAfter says whether the response carries one.
	RetryAfter    time.Duration
	HasRetryAfter bool
	// Latency is the time from arrival until the response is complete, for
	// admissions other than Hang (including any stall it overlaps); for a
	// rejection it is 0, or during a stall the time until the stall ends,
	// when the answer is sent.
	Latency time.Duration
	// SlowFirstByte says Latency includes the configured slow-first-byte delay
	// before any byte of the response.
	SlowFirstByte bool
	// Tokens is the token count charged (Request.Tokens + OutputTokens).
	Tokens int64
	// Requests and TokenQuota feed the rate-limit headers: the request limit
	// (RPM when set, else RPS) and TPM, after this decision.
	Requests, TokenQuota Quota
	// InputTokenQuota and OutputTokenQuota are the input- and output-token
	// limits (ServiceConfig.InputTPM and OutputTPM) after this decision;
	// zero Limit when the service has none.
	InputTokenQuota, OutputTokenQuota Quota
	// FirstToken is the time from arrival until the first token of an
	// admission's answer, when the service paces generation
	// (ServiceConfig.Generation); Latency - FirstToken is then the time the
	// output tokens take. 0 when generation is not paced.
	FirstToken time.Duration
	// EarlyRetry says the client came back before a retry delay it was given
	// had elapsed: for Request.Retry RetryUnknown, before its latest delay;
	// for RetryMarked, before the earliest delay of its rate-limited
	// requests not yet retried (each marked retry answers one of them);
	// never for RetryFresh.
	EarlyRetry bool
	// WriteRace says this write overlaps another in-flight write to its
	// resource and was let through (a conflict is not a race: it commits
	// nothing).
	WriteRace bool
}

// Admitted reports whether the request holds a slot until Finish or Cancel.
func (d Decision) Admitted() bool { return d.ID != 0 }

// maxTimeline bounds the per-second timeline (12 days of seconds).
const maxTimeline = 1 << 20

type tenant struct {
	rps, rpm, tpm          limiter
	hasRPS, hasRPM, hasTPM bool
	// itpm and otpm are the input- and output-token limits.
	itpm, otpm       limiter
	hasITPM, hasOTPM bool
	maxConc          int
	inFlight         int
	// base is the configured limits, which events change and restore.
	base      limitSet
	bgNext    time.Duration // next background arrival (BackgroundConfig)
	bgWaiting int64         // background requests waiting for room
}

type slot struct {
	gen      uint32
	live     bool
	kind     Kind
	tenant   *tenant
	start    time.Duration
	tokens   int64
	output   int64 // output tokens charged against OTPM so far
	resource string
	write    bool
}

type counters struct {
	arrived, accepted, completed, cancelled    int64
	wasted, wastedTokens, early, races, tokens int64
	wastedNS, conflicts                        int64
	bgAdmitted, bgLimited                      int64
	limited                                    [numLimits]int64
	errors                                     [numKinds]int64
	peak                                       int
	timeline                                   []Second
}

// Model is a pure model of one rate-limited service. Time is a
// [time.Duration] since an epoch the driver chooses and must not go
// backwards; randomness comes from the *rand.Rand given to NewModel. A Model
// is not safe for concurrent use: the driver serializes calls.
//
// For every Arrive that returns an admitted Decision, the driver calls
// exactly one of Finish (the response was delivered, or the work completed
// after the client had gone) or Cancel (the client closed the connection
// mid-request; the work stops).
type Model struct {
	cfg      ServiceConfig
	lat      sampler
	faults   *rand.Rand
	overload *rand.Rand
	// conflict draws whether an overlapping write conflicts, when
	// FaultConfig.ConflictRate is below 1.
	conflict *rand.Rand

	single  tenant
	tenants map[string]*tenant

	slots    []slot
	free     []uint32
	inFlight int

	retryAt map[string]time.Duration
	// pruneAt is the size of retryAt at which deadlines already past are
	// dropped, so clients that never come back do not grow it without bound.
	pruneAt int
	writes  map[string]int
	// pending holds, per client, the retry deadlines of rate-limited
	// requests not yet matched by a marked retry.
	pending map[string][]time.Duration
	// pendingPruneAt is the size of pending at which it is pruned next.
	pendingPruneAt int

	epInit         bool
	epStart, epEnd time.Duration

	// events are the timed events; evRand draws their overload rejections.
	events timeline
	evRand *rand.Rand
	// bgGap is the time between groups of background requests (0: none);
	// bgMaxWaiting the most that wait for room at once.
	bgGap        time.Duration
	bgBurst      int64 // requests per group
	bgMaxWaiting int64

	// gen paces generation (ServiceConfig.Generation); nil when unset.
	gen *generation

	c counters
}

// generation draws time to first token and output tokens per second, from
// a stream of its own.
type generation struct {
	ttft, tps       sampler
	hasTTFT, hasTPS bool
}

// pace returns the time to first token and the time n output tokens take,
// in nanoseconds.
func (g *generation) pace(n int64) (first, gen float64) {
	if g.hasTTFT {
		first = g.ttft.draw()
	}
	if g.hasTPS && n > 0 {
		tps := max(g.tps.draw()/rateUnit, MinTokensPerSecond)
		gen = float64(n) * float64(time.Second) / tps
	}
	return first, gen
}

// NewModel returns a model of the service cfg describes, drawing from
// independent streams derived from rng (latency, faults, overload episodes,
// conflicts), so that enabling one fault does not change the latencies drawn. cfg must
// pass Validate, and an empirical distribution must have its Samples loaded
// (see LoadFiles).
func NewModel(cfg ServiceConfig, rng *rand.Rand) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if g := cfg.Generation; g.TTFT.Dist == DistEmpirical && len(g.TTFT.Samples) == 0 || g.TokensPerSecond.Dist == DistEmpirical && len(g.TokensPerSecond.Samples) == 0 {
		return nil, fmt.Errorf("fakeapi: service %q: empirical ttft or tokens_per_s needs samples", cfg.Name)
	}
	if cfg.Latency.Dist == DistEmpirical && len(cfg.Latency.Samples) == 0 {
		return nil, fmt.Errorf("fakeapi: service %q: empirical latency samples are not loaded (call LoadFiles)", cfg.Name)
	}
	cfg = cfg.withDefaults()
	sub := func() *rand.Rand { return rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())) }
	m := &Model{
		cfg:            cfg,
		retryAt:        map[string]time.Duration{},
		pruneAt:        minPrune,
		writes:         map[string]int{},
		pending:        map[string][]time.Duration{},
		pendingPruneAt: minPrune,
		faults:         sub(),
		overload:       sub(),
	}
	m.lat = newSampler(cfg.Latency, sub())
	// Drawn last, so that the other streams do not depend on them.
	m.evRand = sub()
	m.events = newTimeline(cfg.Events)
	m.conflict = sub()
	if g := cfg.Generation; g.enabled() {
		// A stream of its own, drawn after the others: turning generation
		// on changes none of their draws.
		rng := sub()
		m.gen = &generation{hasTTFT: g.TTFT.Dist != "", hasTPS: g.TokensPerSecond.Dist != ""}
		if m.gen.hasTTFT {
			m.gen.ttft = newSampler(g.TTFT, rng)
		}
		if m.gen.hasTPS {
			m.gen.tps = newSampler(g.TokensPerSecond.latency(), rng)
		}
	}
	if r := cfg.Background.Rate; r > 0 {
		m.bgBurst = max(cfg.Background.Burst, 1)
		m.bgGap = max(time.Duration(math.Round(float64(m.bgBurst)*float64(time.Second)/r)), 1)
		m.bgMaxWaiting = max(int64(BackgroundPatience/m.bgGap)*m.bgBurst, m.bgBurst)
	}
	if len(cfg.Keys) == 0 {
		m.single = m.newTenant(KeyConfig{})
	} else {
		m.tenants = make(map[string]*tenant, len(cfg.Keys))
		for _, k := range cfg.Keys {
			t := m.newTenant(k)
			m.tenants[k.Key] = &t
		}
	}
	return m, nil
}

func (m *Model) newTenant(k KeyConfig) tenant {
	c := m.cfg
	or := func(a, b int64) int64 {
		if a != 0 {
			return a
		}
		return b
	}
	rps, rpm, tpm := or(k.RPS, c.RPS), or(k.RPM, c.RPM), or(k.TPM, c.TPM)
	t := tenant{maxConc: c.MaxConcurrent}
	if k.MaxConcurrent != 0 {
		t.maxConc = k.MaxConcurrent
	}
	if rps > 0 {
		t.hasRPS = true
		t.rps = newLimiter(c.Algorithm, rps, time.Second, c.Burst)
	}
	if rpm > 0 {
		t.hasRPM = true
		var burst int64
		if rps == 0 {
			burst = c.Burst
		}
		t.rpm = newLimiter(c.Algorithm, rpm, time.Minute, burst)
	}
	if tpm > 0 {
		t.hasTPM = true
		t.tpm = newLimiter(c.Algorithm, tpm, time.Minute, c.TokenBurst)
	}
	if c.InputTPM > 0 {
		t.hasITPM = true
		t.itpm = newLimiter(c.Algorithm, c.InputTPM, time.Minute, 0)
	}
	if c.OutputTPM > 0 {
		t.hasOTPM = true
		t.otpm = newLimiter(c.Algorithm, c.OutputTPM, time.Minute, 0)
	}
	t.base = limitsOf(&t)
	return t
}

// Config returns the model's configuration with defaults applied.
func (m *Model) Config() ServiceConfig { return m.cfg }

// InFlight returns the number of admitted requests not yet finished or cancelled.
func (m *Model) InFlight() int { return m.inFlight }

// Arrive decides what happens to a request arriving at now, and accounts for
// it, under the events (ServiceConfig.Events) in force at now. During a
// stall, a rejection's Latency is the time until the stall ends, when its
// answer is sent.
func (m *Model) Arrive(now time.Duration, r Request) Decision {
	d := m.arrive(now, r)
	if !d.Admitted() && len(m.events.stalls) > 0 {
		d.Latency = m.events.stalledUntil(now) - now
	}
	return d
}

func (m *Model) arrive(now time.Duration, r Request) Decision {
	m.c.arrived++
	var d Decision
	if r.Retry == RetryMarked {
		d.EarlyRetry = m.matchRetry(now, r.Client)
	}
	if r.Retry == RetryUnknown && len(m.retryAt) > 0 {
		if at, ok := m.retryAt[r.Client]; ok {
			if now < at {
				d.EarlyRetry = true
				m.c.early++
			} else {
				delete(m.retryAt, r.Client)
			}
		}
	}
	m.applyLimits(now)
	if e := m.events.active(now, func(e *Event) bool { return e.Outage }); e != nil {
		d.Wait = e.End() - now
		status := 503
		if m.cfg.API == APIAnthropic {
			status = 529
		}
		return m.reject(d, KindOverloaded, status)
	}
	t := &m.single
	if m.tenants != nil {
		if t = m.tenants[r.Key]; t == nil {
			return m.reject(d, KindUnauthorized, 401)
		}
	}
	if m.bgGap > 0 {
		m.background(t, now)
	}
	if r.Bytes > m.cfg.MaxBodyBytes {
		return m.reject(d, KindTooLarge, 413)
	}
	if r.Malformed || r.Tokens < 0 || r.OutputTokens < 0 {
		return m.reject(d, KindBadRequest, 400)
	}
	// Saturating: two huge counts must not wrap to a small or negative sum
	// that the token limit would then let through.
	n := satmath.Add(r.Tokens, r.OutputTokens)
	d.Tokens = n
	if t.hasTPM && n > t.tpm.max() {
		d.Limit = LimitTPM
		return m.reject(d, KindTooLarge, 413)
	}
	if t.hasITPM && r.Tokens > t.itpm.max() {
		d.Limit = LimitITPM
		return m.reject(d, KindTooLarge, 413)
	}
	if t.hasOTPM && r.OutputTokens > t.otpm.max() {
		d.Limit = LimitOTPM
		return m.reject(d, KindTooLarge, 413)
	}
	if m.overloaded(now) {
		d.Wait = m.epEnd - now
		return m.reject(d, KindOverloaded, 529)
	}
	if e := m.events.active(now, func(e *Event) bool { return e.OverloadRate != nil }); e != nil {
		if r := *e.OverloadRate; r >= 1 || (r > 0 && m.evRand.Float64() < r) {
			d.Wait = e.End() - now
			return m.reject(d, KindOverloaded, 529)
		}
	}
	if t.hasRPS {
		t.rps.advance(now)
	}
	if t.hasRPM {
		t.rpm.advance(now)
	}
	if t.hasTPM {
		t.tpm.advance(now)
	}
	if t.hasITPM {
		t.itpm.advance(now)
	}
	if t.hasOTPM {
		t.otpm.advance(now)
	}
	if t.maxConc > 0 && t.inFlight >= t.maxConc {
		d.Limit = LimitConcurrency
		return m.limited(now, r, t, d, m.cfg.ConcurrencyRetryAfter)
	}
	var w time.Duration
	if t.hasRPS {
		if x := t.rps.wait(now, 1); x > w {
			w, d.Limit = x, LimitRPS
		}
	}
	if t.hasRPM {
		if x := t.rpm.wait(now, 1); x > w {
			w, d.Limit = x, LimitRPM
		}
	}
	if t.hasTPM {
		if x := t.tpm.wait(now, n); x > w {
			w, d.Limit = x, LimitTPM
		}
	}
	if t.hasITPM {
		if x := t.itpm.wait(now, r.Tokens); x > w {
			w, d.Limit = x, LimitITPM
		}
	}
	if t.hasOTPM {
		if x := t.otpm.wait(now, r.OutputTokens); x > w {
			w, d.Limit = x, LimitOTPM
		}
	}
	if w > 0 {
		d.Wait = w
		return m.limited(now, r, t, d, w)
	}

	// Admitted.
	if t.hasRPS {
		t.rps.take(now, 1)
	}
	if t.hasRPM {
		t.rpm.take(now, 1)
	}
	if t.hasTPM {
		t.tpm.take(now, n)
	}
	if t.hasITPM {
		t.itpm.take(now, r.Tokens)
	}
	if t.hasOTPM {
		t.otpm.take(now, r.OutputTokens)
	}
	m.quotas(now, t, &d)
	m.c.accepted++
	m.c.tokens = satmath.Add(m.c.tokens, n)
	m.tick(now, true)

	lat := m.lat.draw()
	var first float64
	if m.gen != nil {
		ttft, gen := m.gen.pace(r.OutputTokens)
		first = lat + ttft
		lat = first + gen
	}
	if f := m.cfg.Latency.LoadSlope; f > 0 {
		if over := m.inFlight - m.cfg.Latency.LoadKnee; over > 0 {
			lat *= 1 + f*float64(over)
			first *= 1 + f*float64(over)
		}
	}
	if e := m.events.active(now, func(e *Event) bool { return e.LatencyFactor > 0 }); e != nil {
		lat *= e.LatencyFactor
		first *= e.LatencyFactor
	}
	fc := m.cfg.Faults
	if e := m.events.active(now, func(e *Event) bool { return e.ErrorRate != nil }); e != nil {
		fc.ErrorRate = *e.ErrorRate
	}
	if fc.SlowFirstByteRate > 0 && m.faults.Float64() < fc.SlowFirstByteRate {
		lat += float64(fc.SlowFirstByte)
		first += float64(fc.SlowFirstByte)
		d.SlowFirstByte = true
	}
	d.Latency = time.Duration(min(lat, math.MaxInt64/2))
	if m.gen != nil {
		d.FirstToken = min(time.Duration(min(first, math.MaxInt64/2)), d.Latency)
	}
	if len(m.events.stalls) > 0 {
		d.Latency = m.events.finishAt(now, d.Latency) - now
		if m.gen != nil {
			d.FirstToken = m.events.finishAt(now, d.FirstToken) - now
		}
	}
	d.Kind, d.Status = KindOK, 200
	if fc.ErrorRate+fc.HangRate+fc.ResetRate > 0 {
		switch u := m.faults.Float64(); {
		case u < fc.ErrorRate:
			d.Kind, d.Status = KindServerError, fc.ErrorStatus
		case u < fc.ErrorRate+fc.HangRate:
			d.Kind, d.Status, d.Latency, d.FirstToken = KindHang, 0, 0, 0
			m.c.errors[KindHang]++
		case u < fc.ErrorRate+fc.HangRate+fc.ResetRate:
			d.Kind, d.Status = KindReset, 0
		}
	}
	var res string
	if r.Write {
		res = r.resource()
		if d.Kind == KindOK && m.conflicts(res) {
			d.Kind, d.Status = KindConflict, 409
			m.c.conflicts++
		}
	}

	var idx uint32
	if k := len(m.free); k > 0 {
		idx = m.free[k-1]
		m.free = m.free[:k-1]
	} else {
		idx = uint32(len(m.slots))
		m.slots = append(m.slots, slot{})
	}
	s := &m.slots[idx]
	s.gen++
	s.live, s.kind, s.tenant, s.start, s.tokens, s.output = true, d.Kind, t, now, n, r.OutputTokens
	if r.Write && d.Kind != KindConflict {
		if m.writes[res] > 0 {
			d.WriteRace = true
			m.c.races++
		}
		m.writes[res]++
		s.resource, s.write = res, true
	} else {
		s.resource, s.write = "", false
	}
	d.ID = ID(uint64(s.gen)<<32 | uint64(idx))
	t.inFlight++
	m.inFlight++
	m.c.peak = max(m.c.peak, m.inFlight)
	return d
}

// limited finishes a 429 decision whose true wait (for the advertised delay)
// is wait.
func (m *Model) limited(now time.Duration, r Request, t *tenant, d Decision, wait time.Duration) Decision {
	if m.cfg.CountRejected {
		if t.hasRPS {
			t.rps.take(now, 1)
		}
		if t.hasRPM {
			t.rpm.take(now, 1)
		}
	}
	d.Kind, d.Status = KindRateLimited, 429
	d.RetryAfter, d.HasRetryAfter = m.advertise(wait)
	if d.HasRetryAfter && r.Retry != RetryUnknown {
		m.addPending(now, r.Client, satmath.Add(now, d.RetryAfter))
	} else if d.HasRetryAfter {
		if at := satmath.Add(now, d.RetryAfter); at > m.retryAt[r.Client] {
			m.retryAt[r.Client] = at
			if len(m.retryAt) >= m.pruneAt {
				m.pruneRetries(now)
			}
		}
	}
	m.quotas(now, t, &d)
	m.c.limited[d.Limit]++
	m.tick(now, false)
	return d
}

func (m *Model) reject(d Decision, k Kind, status int) Decision {
	d.Kind, d.Status = k, status
	m.c.errors[k]++
	return d
}

// advertise turns a true wait into the delay the client is told.
func (m *Model) advertise(w time.Duration) (time.Duration, bool) {
	if m.cfg.Lie == LieMissing || m.cfg.Headers == HeadersNone {
		return 0, false
	}
	unit := time.Second
	if m.cfg.Headers == HeadersOpenAI {
		unit = time.Millisecond
	}
	if m.cfg.Lie == LieShort {
		w = time.Duration(float64(w) * m.cfg.LieFactor)
		return w - w%unit, true // a liar rounds down
	}
	return RoundUp(w, unit), true
}

// RoundUp rounds d up to a multiple of unit, as providers round retry
// delays, saturating at the largest Duration.
func RoundUp(d, unit time.Duration) time.Duration {
	if r := d % unit; r != 0 {
		d = satmath.Add(d, unit-r)
	}
	return d
}

func (m *Model) quotas(now time.Duration, t *tenant, d *Decision) {
	switch {
	case t.hasRPM:
		d.Requests.Limit, d.Requests.Remaining, d.Requests.Reset = t.rpm.state(now)
	case t.hasRPS:
		// Providers publish request limits per minute: a per-second limit
		// is published as the per-minute budget it allows.
		d.Requests.Limit, d.Requests.Remaining, d.Requests.Reset = t.rps.state(now)
		d.Requests.Limit = satmath.Mul(d.Requests.Limit, 60)
		d.Requests.Remaining = satmath.Mul(d.Requests.Remaining, 60)
	}
	if t.hasTPM {
		d.TokenQuota.Limit, d.TokenQuota.Remaining, d.TokenQuota.Reset = t.tpm.state(now)
	}
	if t.hasITPM {
		d.InputTokenQuota.Limit, d.InputTokenQuota.Remaining, d.InputTokenQuota.Reset = t.itpm.state(now)
	}
	if t.hasOTPM {
		d.OutputTokenQuota.Limit, d.OutputTokenQuota.Remaining, d.OutputTokenQuota.Reset = t.otpm.state(now)
	}
}

// SettleOutput settles admitted request id's output tokens at now, when the
// answer's size is known: the service's OutputTPM bucket was charged the
// request's Request.OutputTokens (its max_tokens) at admission and is
// charged the excess of actual over that, or given back the shortfall, as
// Anthropic settles OTPM at the end of a request. A sliding window keeps
// the shortfall (its log cannot return units). It does nothing when the
// service has no OutputTPM; TPM stays charged as at admission. Settling an
// id already finished or cancelled panics; actual must not be negative.
func (m *Model) SettleOutput(now time.Duration, id ID, actual int64) {
	idx, gen := uint32(id), uint32(id>>32)
	if int(idx) >= len(m.slots) || !m.slots[idx].live || m.slots[idx].gen != gen {
		panic(fmt.Sprintf("fakeapi: SettleOutput of unknown or already released request %d", id))
	}
	if actual < 0 {
		panic(fmt.Sprintf("fakeapi: SettleOutput with negative output tokens %d", actual))
	}
	s := &m.slots[idx]
	t := s.tenant
	diff := actual - s.output
	s.output = actual
	if !t.hasOTPM || diff == 0 {
		return
	}
	t.otpm.advance(now)
	if diff > 0 {
		t.otpm.take(now, diff)
	} else {
		t.otpm.give(-diff)
	}
}

// maxEpisodeSteps bounds the overload episodes overloaded steps through one
// at a time on one arrival; past it, it jumps to the phase at the arrival.
const maxEpisodeSteps = 64

// overloaded reports whether an arrival at now falls into an overload
// episode and is rejected by it.
//
// Episodes alternate with exponential gaps of mean Every. Between arrivals
// close together the model steps through them one by one, as drawn. When an
// arrival comes more than maxEpisodeSteps episodes after the last one (a
// tiny Every, or a long quiet spell), stepping could take as many iterations
// as nanoseconds; instead the model draws the phase at now from the
// process's long-run distribution, which is what the steps converge to:
// now falls inside an episode with probability Length ÷ (Every + Length),
// with a uniform part of it left; otherwise the gap left is exponential with
// mean Every, since exponential gaps are memoryless. Either way the work per
// arrival is bounded.
func (m *Model) overloaded(now time.Duration) bool {
	o := &m.cfg.Faults.Overload
	if o.Every == 0 {
		return false
	}
	gap := func() time.Duration { return satmath.Scale(o.Every, m.overload.ExpFloat64()) }
	if !m.epInit {
		m.epInit = true
		m.epStart = gap()
		m.epEnd = satmath.Add(m.epStart, o.Length)
	}
	for steps := 0; now >= m.epEnd; steps++ {
		if steps == maxEpisodeSteps {
			m.jumpEpisode(now)
			break
		}
		m.epStart = satmath.Add(m.epEnd, gap())
		m.epEnd = satmath.Add(m.epStart, o.Length)
	}
	if now < m.epStart {
		return false
	}
	return o.Rate >= 1 || m.overload.Float64() < o.Rate
}

// jumpEpisode sets the episode at or after now by drawing the phase of the
// episode process at now from its long-run distribution (see overloaded).
func (m *Model) jumpEpisode(now time.Duration) {
	o := &m.cfg.Faults.Overload
	every, length := float64(o.Every), float64(o.Length)
	// The time left in the phase is a real number above 0; the phase ends at
	// the first whole nanosecond at or after it.
	left := func(x float64) time.Duration { return satmath.FromFloat[time.Duration](math.Ceil(x)) }
	if m.overload.Float64()*(every+length) < length {
		m.epEnd = satmath.Add(now, max(left(length*m.overload.Float64()), 1))
		m.epStart = satmath.Sub(m.epEnd, o.Length)
		return
	}
	m.epStart = satmath.Add(now, max(left(every*m.overload.ExpFloat64()), 1))
	m.epEnd = satmath.Add(m.epStart, o.Length)
}

// tick records one admitted or rate-limited arrival in the timeline.
func (m *Model) tick(now time.Duration, admitted bool) {
	if now < 0 {
		return
	}
	sec := int64(now / time.Second)
	if sec >= maxTimeline {
		return
	}
	tl := m.c.timeline
	for int64(len(tl)) <= sec {
		tl = append(tl, Second{T: int64(len(tl))})
	}
	if admitted {
		tl[sec].Admitted++
	} else {
		tl[sec].Limited++
	}
	m.c.timeline = tl
}

// release frees id's slot and returns a copy of it; a stale or unknown id
// is a bug in the driver and panics.
func (m *Model) release(id ID, op string, hangOK bool) slot {
	idx, gen := uint32(id), uint32(id>>32)
	if int(idx) >= len(m.slots) || !m.slots[idx].live || m.slots[idx].gen != gen {
		panic(fmt.Sprintf("fakeapi: %s of unknown or already released request %d", op, id))
	}
	s := &m.slots[idx]
	if s.kind == KindHang && !hangOK {
		panic(fmt.Sprintf("fakeapi: %s of hanging request %d; call Cancel when the client gives up", op, id))
	}
	out := *s
	s.live, s.tenant, s.resource = false, nil, ""
	m.free = append(m.free, idx)
	out.tenant.inFlight--
	m.inFlight--
	if out.write {
		if m.writes[out.resource]--; m.writes[out.resource] <= 0 {
			delete(m.writes, out.resource)
		}
	}
	return out
}

// Finish ends admitted request id at now: its response was delivered, or,
// when clientGone, the work completed after the client had gone and its
// seconds and tokens count as wasted. Finishing a hanging request, or an id
// already finished or cancelled, panics.
func (m *Model) Finish(now time.Duration, id ID, clientGone bool) {
	s := m.release(id, "Finish", false)
	switch s.kind {
	case KindOK:
		if clientGone {
			m.c.wasted++
			m.c.wastedNS = satmath.Add(m.c.wastedNS, int64(now-s.start))
			m.c.wastedTokens = satmath.Add(m.c.wastedTokens, s.tokens)
		} else {
			m.c.completed++
		}
	default:
		m.c.errors[s.kind]++
	}
}

// Cancel ends admitted request id at now because the client closed the
// connection mid-request: the work stops and nothing is wasted. Cancelling
// an id already finished or cancelled panics.
func (m *Model) Cancel(now time.Duration, id ID) {
	m.release(id, "Cancel", true)
	m.c.cancelled++
}

// ResetStats clears the accounting; limiter state and requests in flight
// are kept (the peak restarts at the current concurrency).
func (m *Model) ResetStats() {
	m.c = counters{peak: m.inFlight}
	clear(m.retryAt)
	clear(m.pending)
}

// minPrune is the least size of the retry-deadline map worth pruning.
const minPrune = 1024

// pruneRetries drops the retry deadlines that have passed: a client
// arriving after its deadline is not early, so forgetting it changes no
// count. The next prune waits until the map has doubled, so the work stays
// proportional to the deadlines added.
func (m *Model) pruneRetries(now time.Duration) {
	for c, at := range m.retryAt {
		if at <= now {
			delete(m.retryAt, c)
		}
	}
	m.pruneAt = max(minPrune, 2*len(m.retryAt))
}

// maxPending bounds the deadlines kept per client; pendingHorizon is how
// long past its deadline one is kept for a retry to match.
const (
	maxPending     = 4096
	pendingHorizon = 10 * time.Minute
)

// matchRetry matches a marked retry from client at now to the earliest
// pending deadline of that client, consumes it, and reports whether the
// retry was early: every pending deadline was still ahead. Deadlines more
// than pendingHorizon past are dropped first: a client that retries that
// late answers none of them. A retry with no
// pending deadline (it follows a 5xx, or a 429 without a delay) is not early.
func (m *Model) matchRetry(now time.Duration, client string) bool {
	ds := slices.DeleteFunc(m.pending[client], func(d time.Duration) bool { return d < now-pendingHorizon })
	if len(ds) == 0 {
		delete(m.pending, client)
		return false
	}
	i := 0
	for j, d := range ds {
		if d < ds[i] {
			i = j
		}
	}
	early := now < ds[i]
	if early {
		m.c.early++
	}
	ds[i] = ds[len(ds)-1]
	if ds = ds[:len(ds)-1]; len(ds) == 0 {
		delete(m.pending, client)
	} else {
		m.pending[client] = ds
	}
	return early
}

// addPending records the retry deadline at of a rate-limited request from
// client, dropping deadlines long past (and the oldest past maxPending), so
// clients that never retry do not grow the map without bound.
func (m *Model) addPending(now time.Duration, client string, at time.Duration) {
	ds := m.pending[client]
	if len(ds) >= maxPending {
		ds = slices.DeleteFunc(ds, func(d time.Duration) bool { return d < now-pendingHorizon })
		if len(ds) >= maxPending {
			ds = ds[1:]
		}
	}
	m.pending[client] = append(ds, at)
	if len(m.pending) >= m.pendingPruneAt {
		for c, ds := range m.pending {
			if ds = slices.DeleteFunc(ds, func(d time.Duration) bool { return d < now-pendingHorizon }); len(ds) == 0 {
				delete(m.pending, c)
			} else {
				m.pending[c] = ds
			}
		}
		m.pendingPruneAt = max(minPrune, 2*len(m.pending))
	}
}

// background accrues the background requests of tenant t that arrive at
// or before now (see BackgroundConfig), each at its own time, then lets
// those still waiting take what has freed by now, ahead of the arrival at
// now.
func (m *Model) background(t *tenant, now time.Duration) {
	if skip := satmath.Sub(now, BackgroundHorizon); t.bgNext < skip {
		t.bgNext += (skip - t.bgNext) / m.bgGap * m.bgGap
	}
	for ; t.bgNext <= now; t.bgNext += m.bgGap {
		t.bgWaiting += m.bgBurst
		if over := t.bgWaiting - m.bgMaxWaiting; over > 0 {
			m.c.bgLimited += over // the oldest give up
			t.bgWaiting = m.bgMaxWaiting
		}
		m.bgDrain(t, t.bgNext)
	}
	m.bgDrain(t, now)
}

// bgDrain admits waiting background requests of t at time at while its
// limits have room for them.
func (m *Model) bgDrain(t *tenant, at time.Duration) {
	if t.bgWaiting == 0 {
		return
	}
	if t.hasRPS {
		t.rps.advance(at)
	}
	if t.hasRPM {
		t.rpm.advance(at)
	}
	if t.hasTPM {
		t.tpm.advance(at)
	}
	n := m.cfg.Background.Tokens
	if t.hasTPM && n > t.tpm.max() {
		m.c.bgLimited += t.bgWaiting // can never fit
		t.bgWaiting = 0
		return
	}
	for t.bgWaiting > 0 {
		if (t.hasRPS && t.rps.wait(at, 1) > 0) || (t.hasRPM && t.rpm.wait(at, 1) > 0) || (t.hasTPM && t.tpm.wait(at, n) > 0) {
			return
		}
		if t.hasRPS {
			t.rps.take(at, 1)
		}
		if t.hasRPM {
			t.rpm.take(at, 1)
		}
		if t.hasTPM {
			t.tpm.take(at, n)
		}
		t.bgWaiting--
		m.c.bgAdmitted++
	}
}
