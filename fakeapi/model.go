package fakeapi

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// slot is an admitted request until Finish or Cancel; gen tells a reused
// slot's requests apart (ID is gen<<32 | index). Its small fields come
// first, in one word.
type slot struct {
	gen      uint32
	live     bool
	kind     Kind
	write    bool
	tenant   *tenant
	start    time.Duration
	tokens   int64
	output   int64 // output tokens charged against OTPM so far
	resource string
	// _ pads a slot to 64 bytes, so that in the slots array (page-aligned
	// once it is large) each slot is one cache line: at 56 bytes seven
	// slots in eight straddle two, and an admission and a release each
	// read two lines long out of the cache.
	_ [8]byte
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
	// spec.Faults.Conflict is below 1.
	conflict *rand.Rand

	single  tenant
	tenants map[string]*tenant
	// levels are the levels above keys under nested limits
	// (spec.Config.Projects): the projects in order, then the
	// organisation; nil without projects.
	levels []*tenant

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
	// daily is the per-day quota (spec.Config.Daily); nil when unset.
	daily *dailyQuota

	c counters
	// spent is the tokens charged against spec.Faults.Credit: admitted
	// requests' tokens, settled.
	spent int64
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
	if g := cfg.Generation; g.Enabled() {
		// A stream of its own, drawn after the others: turning generation
		// on changes none of their draws.
		m.gen = newGeneration(g, sub())
	}
	m.daily = newDaily(cfg.Daily)
	if r := cfg.Background.Rate; r > 0 {
		m.bgBurst = max(cfg.Background.Burst, 1)
		m.bgGap = max(time.Duration(math.Round(float64(m.bgBurst)*float64(time.Second)/r)), 1)
		m.bgMaxWaiting = max(int64(spec.BackgroundPatience/m.bgGap)*m.bgBurst, m.bgBurst)
	}
	if len(cfg.Keys) == 0 {
		m.single = m.newTenant(spec.Key{})
	} else {
		m.tenants = make(map[string]*tenant, len(cfg.Keys))
		for _, k := range cfg.Keys {
			t := m.newTenant(k)
			m.tenants[k.Key] = &t
		}
	}
	if len(cfg.Projects) > 0 {
		m.nest()
	}
	return m, nil
}

// nest sets up nested limits (spec.Config.Projects): a level for each
// project and one for the organisation, and each key's tenant bound to its
// project or the organisation, enforcing only the key's own limits.
func (m *Model) nest() {
	org := m.newLevel(nil)
	projects := make(map[string]*tenant, len(m.cfg.Projects))
	for i := range m.cfg.Projects {
		p := m.newLevel(&m.cfg.Projects[i])
		p.up = &org
		projects[p.name] = &p
		m.levels = append(m.levels, &p)
	}
	m.levels = append(m.levels, &org)
	for _, k := range m.cfg.Keys {
		var limit units
		limit[rateRPS], limit[rateRPM], limit[rateTPM] = k.RPS, k.RPM, k.TPM
		t := m.ownTenant(limit, k.MaxConcurrent)
		t.level, t.name, t.up = LevelKey, k.Key, &org
		if k.Project != "" {
			t.up = projects[k.Project]
		}
		*m.tenants[k.Key] = t
	}
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
	var d Decision
	m.ArriveTo(now, &r, &d)
	return d
}

// ArriveTo is Arrive deciding into *d, which it overwrites: a driver that
// decides many requests spares copying each Request and Decision. It
// does not change *r.
func (m *Model) ArriveTo(now time.Duration, r *Request, d *Decision) {
	*d = Decision{}
	m.arrive(now, r, d)
	if !d.Admitted() && len(m.events.stalls) > 0 {
		d.Latency = m.events.stalledUntil(now) - now
	}
}

// arrive decides what happens to r into d, in the order a service checks:
// early retry accounting, the limits events set, the refusals that spend
// no quota, the concurrency cap, the rate limits, and admission.
func (m *Model) arrive(now time.Duration, r *Request, d *Decision) {
	m.c.arrived++
	d.EarlyRetry = m.earlyRetry(now, r)
	m.applyLimits(now)
	t, kind, status := m.screen(now, r, d)
	if status != 0 {
		m.reject(d, kind, status)
		return
	}
	var u units
	u.set(r.Tokens, r.OutputTokens, d.Tokens)
	if d.Limit = t.tooLarge(&u, allRates); d.Limit != LimitNone {
		m.reject(d, KindTooLarge, 413)
		return
	}
	if m.daily != nil {
		if d.Limit = m.daily.tooLarge(d.Tokens); d.Limit != LimitNone {
			m.reject(d, KindTooLarge, 413)
			return
		}
	}
	if m.shed(now, d) {
		m.reject(d, KindOverloaded, 529)
		return
	}
	w, l, by := t.wait(now, &u, allRates)
	dw, dl := m.dailyWait(now, d.Tokens)
	switch full := t.full(); {
	case dw > 0 && dw >= w:
		// A spent daily quota refuses ahead of the concurrency cap: its
		// wait, to the reset, is the one that binds.
		d.Wait, d.Limit = dw, dl
		m.limited(now, r, t, nil, d, dw)
		d.DailyQuota = m.daily.state(now, dl)
		if d.EarlyRetry {
			m.c.dailyRetries++
		}
	case full != nil:
		d.Limit = LimitConcurrency
		m.limited(now, r, t, full, d, m.cfg.ConcurrencyRetryAfter)
	case w > 0:
		d.Wait, d.Limit = w, l
		m.limited(now, r, t, by, d, w)
	default:
		m.admit(now, r, t, &u, d)
	}
}

// dailyWait brings the daily quota to now and returns how long after now
// it would admit a request of tokens, and the limit that binds (0 and
// LimitNone: now, or no daily quota).
func (m *Model) dailyWait(now time.Duration, tokens int64) (time.Duration, Limit) {
	if m.daily == nil {
		return 0, LimitNone
	}
	m.daily.advance(now)
	return m.daily.wait(now, tokens)
}

// screen returns the tenant r arrives at, or the kind and status of a
// refusal (status 0: none) by an outage, for an unknown key, or for a
// body too large or malformed; it accrues the tenant's background traffic
// first. It sets d.Tokens, and the Wait of an outage.
func (m *Model) screen(now time.Duration, r *Request, d *Decision) (t *tenant, k Kind, status int) {
	if e := m.events.active(now, func(e *spec.Event) bool { return e.Outage }); e != nil {
		d.Wait = e.End() - now
		return nil, KindOverloaded, wire.ProviderOf(m.cfg.API).OutageStatus()
	}
	t = &m.single
	if m.tenants != nil {
		if t = m.tenants[r.Key]; t == nil {
			return nil, KindUnauthorized, 401
		}
	}
	if m.bgGap > 0 {
		m.background(t, now)
	}
	if r.Bytes > m.cfg.MaxBodyBytes {
		return nil, KindTooLarge, 413
	}
	if r.Malformed || r.Tokens < 0 || r.OutputTokens < 0 {
		return nil, KindBadRequest, 400
	}
	// Saturating: two huge counts must not wrap to a small or negative sum
	// that the token limit would then let through.
	d.Tokens = satmath.Add(r.Tokens, r.OutputTokens)
	fc := &m.cfg.Faults
	if fc.ContextWindow > 0 && r.Tokens > fc.ContextWindow {
		d.InputTokens = r.Tokens
		return nil, KindContextTooLong, 400
	}
	if fc.Credit > 0 && m.spent >= fc.Credit {
		return nil, KindQuotaExhausted, wire.ProviderOf(m.cfg.API).QuotaStatus()
	}
	return t, 0, 0
}

// admit admits r for tenant t at now: it spends the units u, draws the
// service time and the outcome (a fault, a write conflict), and gives the
// request a slot.
func (m *Model) admit(now time.Duration, r *Request, t *tenant, u *units, d *Decision) {
	t.take(now, u, allRates)
	if m.daily != nil {
		m.daily.take(d.Tokens)
	}
	t.quotas(now, d)
	t.admitted++
	m.c.accepted++
	m.c.tokens = satmath.Add(m.c.tokens, d.Tokens)
	m.spent = satmath.Add(m.spent, d.Tokens)
	m.tick(now, true)
	gen := r.OutputTokens
	if r.Generated > 0 {
		gen = r.Generated
	}
	m.serviceTime(now, gen, d)
	m.outcome(m.errorRate(now), d)
	var res string
	if r.Write {
		res = r.resource()
		if d.Kind == KindOK && m.conflicts(res) {
			d.Kind, d.Status = KindConflict, 409
			m.c.conflicts++
		}
	}
	m.occupy(now, r, t, res, d)
}

// occupy gives admitted request r of tenant t a slot, sets d.ID, and
// accounts for its write to res (a conflict writes nothing).
func (m *Model) occupy(now time.Duration, r *Request, t *tenant, res string, d *Decision) {
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
	s.live, s.kind, s.tenant, s.start, s.tokens, s.output = true, d.Kind, t, now, d.Tokens, r.OutputTokens
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
	for ; t != nil; t = t.up {
		t.inFlight++
	}
	m.inFlight++
	m.c.peak = max(m.c.peak, m.inFlight)
}

// limited finishes a 429 decision for tenant t, refused at level by,
// whose true wait (for the advertised delay) is wait. No level's limits
// are charged for the request (a level that had room is not charged when
// another refuses), except under ServiceConfig.CountRejected, which
// charges every level's request limits, as it charges a single tenant's.
func (m *Model) limited(now time.Duration, r *Request, t, by *tenant, d *Decision, wait time.Duration) {
	if m.cfg.CountRejected {
		var u units
		u.set(0, 0, 0)
		t.take(now, &u, requestRates)
	}
	d.Kind, d.Status = KindRateLimited, 429
	d.RetryAfter, d.HasRetryAfter = m.advertise(wait)
	if d.HasRetryAfter {
		d.RetryIn = m.cfg.Faults.RetryDelayBody
	}
	if d.HasRetryAfter {
		m.remember(now, r, d.RetryAfter)
	}
	t.quotas(now, d)
	if by != nil && by.level != LevelNone {
		// The 429 quotes the figures of the level that refused: of a
		// per-second limit, its own (per minute, as headers publish it),
		// even when the level has a per-minute one too.
		by.own(now, d)
		if d.Limit == LimitRPS {
			limit, remaining, reset := by.lim[rateRPS].state(now)
			d.Requests = Quota{Limit: satmath.Mul(limit, rates[rateRPS].perMinute), Remaining: remaining, Reset: reset}
		}
		d.Level, d.Scope = by.level, by.name
		t.limitedBy[by.level]++
	}
	m.c.limited[d.Limit]++
	m.tick(now, false)
}

// reject makes d an immediate rejection of kind k with status.
func (m *Model) reject(d *Decision, k Kind, status int) {
	d.Kind, d.Status = k, status
	m.c.errors[k]++
}

// SettleOutput settles admitted request id's output tokens at now, when the
// answer's size is known: the service's OutputTPM and TPM buckets were
// charged the request's Request.OutputTokens (its max_tokens) at admission
// and are charged the excess of actual over that, or given back the
// shortfall, as providers settle output tokens at the end of a request; the
// tokens the request is accounted with (TokensAccepted, wasted tokens)
// follow. A sliding window keeps the shortfall (its log cannot return
// units). Settling an id already finished or cancelled panics; actual must
// not be negative.
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
	if diff == 0 {
		return
	}
	s.output = actual
	s.tokens = max(satmath.Add(s.tokens, diff), 0)
	m.c.tokens = max(satmath.Add(m.c.tokens, diff), 0)
	m.spent = max(satmath.Add(m.spent, diff), 0)
	if m.daily != nil {
		m.daily.settle(now, diff)
	}
	for ; t != nil; t = t.up {
		for _, r := range []rate{rateTPM, rateOTPM} {
			if t.has&r.bit() == 0 {
				continue
			}
			l := &t.lim[r]
			l.advance(now)
			if diff > 0 {
				l.take(now, diff)
			} else {
				l.give(-diff)
			}
		}
	}
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
	for t := out.tenant; t != nil; t = t.up {
		t.inFlight--
	}
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
	s := m.release(id, "Cancel", true)
	m.c.cancelled++
	m.c.cancelledNS = satmath.Add(m.c.cancelledNS, int64(now-s.start))
}

// ResetLimiters empties every tenant's rate limiters: full buckets, empty
// windows, the day's daily quota whole again, at the limits in force now (a limiter an event turned off
// too), and the account's credit (spec.Faults.Credit) whole again.
// Requests in flight keep their slots, so the concurrency cap still counts
// them.
func (m *Model) ResetLimiters() {
	m.spent = 0
	if m.daily != nil {
		m.daily.requests, m.daily.toks = 0, 0
	}
	m.eachTenant(func(t *tenant) {
		for r := range numRates {
			if l := &t.lim[r]; l.limit > 0 {
				*l = newLimiter(l.alg, l.limit, l.window, l.capacity)
			}
		}
	})
}

// ResetStats clears the accounting; limiter state and requests in flight
// are kept (the peak restarts at the current concurrency).
func (m *Model) ResetStats() {
	m.c = counters{peak: m.inFlight}
	m.eachTenant(func(t *tenant) { t.admitted, t.limitedBy = 0, [numLevels]int64{} })
	clear(m.retryAt)
	clear(m.pending)
}
