package calibrate

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/trace"
)

// DefaultHorizon is how long, in seconds of trace time, a turn or session
// may go without a record before the calibrator closes it and keeps only
// its figures. Records arrive in roughly time order (a trace writes each
// attempt when it ends), so this bounds memory by the turns active within
// the horizon rather than by the trace's length.
const DefaultHorizon = 300.0

// sweepEvery is how many records pass between sweeps for idle turns.
const sweepEvery = 1 << 16

// Options configure a Calibrator. The zero value uses the defaults.
type Options struct {
	// KSMax is the Kolmogorov–Smirnov distance above which a lognormal
	// fit is poor (0: DefaultKSMax).
	KSMax float64
	// Reservoir is the most values kept per distribution (0:
	// DefaultReservoir).
	Reservoir int
	// Horizon is DefaultHorizon when 0; see there.
	Horizon float64
	// Seed seeds the reservoir sampling, so a calibration is repeatable.
	Seed uint64
	// Progress, when set, is called every 65,536 records with the count
	// so far.
	Progress func(records int64)
}

// key identifies a turn or session: the id in its trace, and which trace
// section (file and header) it came from.
type key struct {
	section int32
	id      int64
}

// Calibrator accumulates attempts from any number of traces and fits a
// scenario to them. Its memory is bounded by the services, the tools, the
// reservoirs and the turns active within the horizon. Not safe for
// concurrent use.
type Calibrator struct {
	opts     Options
	rng      *rand.Rand
	records  int64
	sections int32
	services map[string]*serviceAcc
	last     *serviceAcc // the service of the previous record
	lastTool *toolAcc    // the tool of the previous tool call
	tools    map[string]*toolAcc
	turns    map[key]*turnAcc
	sessions map[key]*sessionAcc
	latest   float64 // the latest End seen
	first    float64 // the earliest Intended seen
	closed   []*turnAcc

	// Workload figures, from closed turns.
	nTurns       int64
	fanOut       *sample // tool calls per turn
	modelTurns   int64   // turns with at least one model call
	modelCalls   int64
	modelTokens  *sample // tokens per model call (first attempts)
	modelService map[string]int64
	think        *sample // gaps between a session's turns, in seconds
	arrivals     *sample // gaps between turn starts, in seconds
	lastArrival  float64
	hasArrival   bool
	sessionTurns *sample // turns per closed session
	sessionSpan  float64 // sum over sessions of last end − first start
	sessionStart *sample // first turn start of each session
	nSessions    int64
	busy         float64 // sum over attempts of End − Start, in seconds
	retries      int64   // attempts after the first
	maxAttempt   int
	sources      []Source
	problems     []error  // records refused, each a *trace.Error
	strategies   []string // the strategies the simbench traces' headers name, in order seen
}

// Source describes one trace read: its path, format and record count.
type Source struct {
	// Path is the trace file's path, as given; Format the format it was
	// read as (detected when asked for FormatAuto); Records how many of
	// its records the calibration used.
	Path    string
	Format  Format
	Records int64
	// Skipped counts items read but not used (spans that are neither a
	// model call nor a tool execution).
	Skipped int64
}

type serviceAcc struct {
	name      string
	attempts  int64
	outcomes  [classCount]int64
	latency   *sample
	limits    trace.Limits // from headers of traces
	limitReq  float64      // the largest limit_requests seen
	limitTok  float64
	retryHdr  bool // a retry_after was seen
	perSecond map[int64]int32
	limited   int64 // 429s
}

type toolAcc struct {
	name    string
	service map[*serviceAcc]int64 // calls by service
	calls   int64
	tokens  *sample
}

type turnAcc struct {
	k          key
	session    key
	hasSession bool
	start, end float64
	tools      int32
	models     int32
	lastSeen   float64
}

type sessionAcc struct {
	turns      int64
	open       int // turns begun and not yet closed
	start, end float64
	lastSeen   float64
}

// New returns an empty Calibrator.
func New(opts Options) *Calibrator {
	if opts.KSMax <= 0 {
		opts.KSMax = DefaultKSMax
	}
	if opts.Reservoir <= 0 {
		opts.Reservoir = DefaultReservoir
	}
	if opts.Horizon <= 0 {
		opts.Horizon = DefaultHorizon
	}
	c := &Calibrator{
		opts:     opts,
		rng:      rand.New(rand.NewPCG(opts.Seed, 0x63616c6962726174)),
		services: map[string]*serviceAcc{}, tools: map[string]*toolAcc{},
		turns: map[key]*turnAcc{}, sessions: map[key]*sessionAcc{},
		modelService: map[string]int64{},
		first:        math.Inf(1), latest: math.Inf(-1),
	}
	c.fanOut = c.newSample()
	c.modelTokens = c.newSample()
	c.think = c.newSample()
	c.arrivals = c.newSample()
	c.sessionTurns = c.newSample()
	c.sessionStart = c.newSample()
	return c
}

func (c *Calibrator) newSample() *sample { return newSample(c.opts.Reservoir, c.rng) }

// Section starts a new trace section: turn and session ids after it are
// distinct from those before. limits, when known, are the section's
// services' limits (from a trace header); limits a scenario cannot hold
// (negative, beyond the scenario bounds, more services than MaxServices)
// are refused with an error, and the section still starts, without them.
func (c *Calibrator) Section(limits map[string]trace.Limits) error {
	c.sections++
	if err := checkLimits(limits); err != nil {
		return err
	}
	for name, l := range limits {
		s := c.service(name)
		s.limits.RPS = max(s.limits.RPS, l.RPS)
		s.limits.RPM = max(s.limits.RPM, l.RPM)
		s.limits.TPM = max(s.limits.TPM, l.TPM)
		s.limits.MaxConcurrent = max(s.limits.MaxConcurrent, l.MaxConcurrent)
	}
	return nil
}

func (c *Calibrator) service(name string) *serviceAcc {
	s := c.services[name]
	if s == nil {
		s = &serviceAcc{name: name, latency: c.newSample(), perSecond: map[int64]int32{}}
		c.services[name] = s
	}
	return s
}

// classOf is the scheduler's class named o, one of trace.Outcomes, which
// lists the names in sched.Class order (trace.Record.Check refuses any
// other name; an unknown one counts as transient).
func classOf(o string) sched.Class {
	if i := slices.Index(trace.Outcomes, o); i >= 0 {
		return sched.Class(i)
	}
	return sched.ClassTransient
}

// classCount is the number of the scheduler's outcome classes.
const classCount = int(sched.ClassConflict) + 1

// Add takes one attempt into the figures. Records of a session are keyed
// by r.Session (0: none) and of a turn by r.Turn, within the current
// section. Times may be any origin; only differences count. A record that
// is invalid (trace.Record.Check) or that a scenario cannot hold (see
// MaxServices, MaxTools, MaxTime and the scenarios bounds it checks) is
// refused with an error saying why, and leaves the figures as they were.
func (c *Calibrator) Add(r *trace.Record) error {
	if err := c.check(r); err != nil {
		return err
	}
	c.records++
	if c.opts.Progress != nil && c.records%sweepEvery == 0 {
		c.opts.Progress(c.records)
	}
	if c.records%sweepEvery == 0 {
		c.sweep(c.latest - c.opts.Horizon)
	}
	c.first = min(c.first, r.Intended)
	c.latest = max(c.latest, r.End)
	c.busy += r.End - r.Start
	s := c.addAttempt(r)
	c.maxAttempt = max(c.maxAttempt, r.Attempt)
	if r.Attempt > 1 {
		c.retries++
	}
	t := c.turn(r)
	t.start, t.end = min(t.start, r.Intended), max(t.end, r.End)
	t.lastSeen = max(t.lastSeen, r.End)
	if r.Attempt > 1 {
		return nil
	}
	if r.Kind == trace.KindModel {
		t.models++
		c.modelCalls++
		c.modelService[r.Service]++
		c.modelTokens.add(float64(r.Tokens))
		return nil
	}
	t.tools++
	c.addToolCall(r, s)
	return nil
}

// addAttempt takes the attempt into its service's figures, and returns
// the service.
func (c *Calibrator) addAttempt(r *trace.Record) *serviceAcc {
	s := c.last
	if s == nil || s.name != r.Service {
		s = c.service(r.Service)
		c.last = s
	}
	s.attempts++
	oc := classOf(r.Outcome)
	s.outcomes[oc]++
	if oc == sched.ClassSuccess {
		s.latency.add(r.End - r.Start)
	}
	if oc == sched.ClassRateLimited {
		s.limited++
	} else if oc != sched.ClassCancelled || r.Status != 0 {
		s.perSecond[int64(math.Floor(r.Start))]++ // admitted (or at least answered) requests
	}
	s.limitReq = max(s.limitReq, r.LimitRequests)
	s.limitTok = max(s.limitTok, r.LimitTokens)
	s.retryHdr = s.retryHdr || r.HasRetryAfter
	return s
}

// turn returns the open turn of the record, begun (and counted in its
// session) when this is its first record.
func (c *Calibrator) turn(r *trace.Record) *turnAcc {
	k := key{c.sections, r.Turn}
	if t := c.turns[k]; t != nil {
		return t
	}
	t := &turnAcc{k: k, start: r.Intended, end: r.End}
	if r.Session != 0 {
		t.session, t.hasSession = key{c.sections, r.Session}, true
		sa := c.sessions[t.session]
		if sa == nil {
			sa = &sessionAcc{}
			c.sessions[t.session] = sa
		}
		sa.open++
	}
	c.turns[k] = t
	return t
}

// addToolCall counts a tool call's first attempt, made on service s, in
// its tool's figures.
func (c *Calibrator) addToolCall(r *trace.Record, s *serviceAcc) {
	name := r.Tool
	if name == "" {
		name = r.Service
	}
	tl := c.lastTool
	if tl == nil || tl.name != name {
		tl = c.tools[name]
		if tl == nil {
			tl = &toolAcc{name: name, service: map[*serviceAcc]int64{}, tokens: c.newSample()}
			c.tools[name] = tl
		}
		c.lastTool = tl
	}
	tl.calls++
	tl.service[s]++
	tl.tokens.add(float64(r.Tokens))
}

// sweep closes the turns last seen before t, in order of their starts,
// and then the sessions idle since before t, in order of theirs.
func (c *Calibrator) sweep(t float64) {
	c.closed = c.closed[:0]
	for k, tr := range c.turns {
		if tr.lastSeen < t {
			c.closed = append(c.closed, tr)
			delete(c.turns, k)
		}
	}
	slices.SortFunc(c.closed, func(a, b *turnAcc) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.k.section, b.k.section), cmp.Compare(a.k.id, b.k.id))
	})
	for _, tr := range c.closed {
		c.closeTurn(tr)
	}
	// The idle sessions close in order of their starts, not in map order:
	// the figures they enter (running means, reservoirs) depend on it.
	var idle []key
	for k, s := range c.sessions {
		if s.open == 0 && s.lastSeen < t {
			idle = append(idle, k)
		}
	}
	slices.SortFunc(idle, func(a, b key) int {
		return cmp.Or(cmp.Compare(c.sessions[a].start, c.sessions[b].start), cmp.Compare(a.section, b.section), cmp.Compare(a.id, b.id))
	})
	for _, k := range idle {
		c.closeSession(c.sessions[k])
		delete(c.sessions, k)
	}
}

func (c *Calibrator) closeTurn(t *turnAcc) {
	c.nTurns++
	c.fanOut.add(float64(t.tools))
	if t.models > 0 {
		c.modelTurns++
	}
	if c.hasArrival && t.start >= c.lastArrival {
		c.arrivals.add(t.start - c.lastArrival)
	}
	c.lastArrival, c.hasArrival = t.start, true
	if !t.hasSession {
		return
	}
	s := c.sessions[t.session]
	s.open--
	if s.turns == 0 {
		s.start, s.end = t.start, t.end
	} else {
		c.think.add(max(0, t.start-s.end))
	}
	s.turns++
	s.end = max(s.end, t.end)
	s.lastSeen = max(s.lastSeen, t.lastSeen)
}

func (c *Calibrator) closeSession(s *sessionAcc) {
	c.nSessions++
	c.sessionTurns.add(float64(s.turns))
	c.sessionSpan += s.end - s.start
	c.sessionStart.add(s.start)
}

// finish closes every turn and session.
func (c *Calibrator) finish() {
	c.sweep(math.Inf(1))
}

// Records returns the number of attempts added so far.
func (c *Calibrator) Records() int64 { return c.records }
