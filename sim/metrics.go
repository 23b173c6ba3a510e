package sim

import (
	"math"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sched"
)

// collector gathers one strategy's metrics as the run goes, in memory
// bounded by the number of services and timeline buckets, not by calls.
type collector struct {
	services []string
	window   time.Duration // the scenario's duration: goodput's denominator

	turns, failedTurns int64
	lastTurn           time.Duration // when the latest turn finished
	// unfinished counts the turns begun and never ended; late those that
	// ended after the window (a live run's settling, a test's drain): both
	// are unfinished at the end of the run, and late ones stay out of
	// every other figure.
	unfinished, late int64
	// answeredGood counts the successful tool calls of turns answered in
	// full within the window; lateCalls the calls that finished after it.
	answeredGood, lateCalls int64
	refused                 int64
	// modelFailedTurns counts the turns ended within the window that
	// failed for reasons of the model (workload.llm.success: a model turn
	// wrong and not cured by its retries).
	modelFailedTurns  int64
	calls, failed     int64
	goodCalls         int64 // successful tool calls finished within the window
	hedges, hedgesWon int64 // of the calls counted, hedges sent and won
	attempts          int64
	rateLimited       int64
	turnLat, callLat  *histogram
	okTurnLat         *histogram
	attemptsPerCall   []int64
	failedPerAttempts []int64 // of attemptsPerCall, the calls that gave up

	inFlight, peak []int // per service, client side
	total          int   // attempts in flight, all services

	bucket time.Duration
	// past takes the counts of times after the window (a live run's
	// drain, or the lateness a slow machine adds in scenario time), which
	// are dropped: like the turns and calls that end then, they stay out
	// of the timelines, which hold the window's buckets alone, allocated
	// up front (newCollector).
	past results.TimelinePoint
	// at is the bucket bucketAt found last, which holds the times from
	// atFrom up to atTo: times mostly fall in the bucket of the time
	// before, so this spares a division.
	at           int
	atFrom, atTo time.Duration
	timeline     []results.TimelinePoint
	// svcTimeline is timeline per service, in the order of services.
	svcTimeline [][]results.TimelinePoint

	// Work wasted on results nobody read that only the client can see (a
	// live run's reader-only cancels), in the scenario's seconds and tokens.
	wastedS      float64
	wastedTokens int64

	// Calls in the system (submitted, no result yet) integrated over time:
	// a check of Little's law on the engine's own bookkeeping.
	inSystem  int
	area      float64 // call-seconds
	areaSince time.Duration
	callSum   float64 // seconds of call latency

	// Turns begun and not finished, and attempts in flight, integrated over
	// the scenario's duration: L for turns and for attempts.
	turnsIn, attemptsIn level

	// windows count each timed event's figures (nil without events).
	windows []windowAcc
}

// level integrates a count over time up to its end, for time averages.
type level struct {
	n     int
	area  float64 // count × seconds
	since time.Duration
	end   time.Duration
}

// add changes the count by d at now, integrating the old count up to now
// (or up to the end, when now is past it).
func (l *level) add(now time.Duration, d int) {
	if t := min(now, l.end); t > l.since {
		l.area += float64(l.n) * (t - l.since).Seconds()
		l.since = t
	}
	l.n += d
}

// mean returns the time-averaged count from 0 to the end.
func (l *level) mean() float64 {
	l.add(l.end, 0)
	if l.end <= 0 {
		return 0
	}
	return l.area / l.end.Seconds()
}

// enter and leave track tool calls in the system.
func (c *collector) enter(now time.Duration, n int) {
	c.integrate(now)
	c.inSystem += n
}

// leaveN takes n calls out of the system at once (a refused turn).
func (c *collector) leaveN(now time.Duration, n int) {
	c.integrate(now)
	c.inSystem -= n
}

func (c *collector) leave(now time.Duration) {
	c.integrate(now)
	c.inSystem--
}

func (c *collector) integrate(now time.Duration) {
	c.area += float64(c.inSystem) * (now - c.areaSince).Seconds()
	c.areaSince = now
}

// maxTimelinePoints bounds the timeline: longer runs use wider buckets.
const maxTimelinePoints = 1200

func newCollector(services []string, window time.Duration) *collector {
	c := &collector{
		services: services, window: window, turnLat: newHistogram(), callLat: newHistogram(), okTurnLat: newHistogram(),
		inFlight: make([]int, len(services)), peak: make([]int, len(services)), svcTimeline: make([][]results.TimelinePoint, len(services)),
		bucket: time.Second, turnsIn: level{end: window}, attemptsIn: level{end: window},
	}
	if n := window / time.Second; n > maxTimelinePoints {
		c.bucket = time.Duration(math.Ceil(float64(window)/maxTimelinePoints/float64(time.Second))) * time.Second
	}
	// Every bucket the timelines may hold, allocated now: the buckets up
	// to the one holding the window's end. A live run's collector grows
	// its timelines under a lock the Runners' goroutines wait on, where a
	// timeline must never reallocate.
	n := int(max(window, 0)/c.bucket) + 1
	c.timeline = make([]results.TimelinePoint, 0, n)
	for i := range c.svcTimeline {
		c.svcTimeline[i] = make([]results.TimelinePoint, 0, n)
	}
	return c
}

// bucketAt returns the index of the timeline bucket holding t (t ≥ 0).
func (c *collector) bucketAt(t time.Duration) int {
	if t >= c.atFrom && t < c.atTo {
		return c.at
	}
	i := t / c.bucket
	// A bucket whose end overflows is not kept (atTo < atFrom): every
	// time in it divides again.
	c.at, c.atFrom, c.atTo = int(i), i*c.bucket, i*c.bucket+c.bucket
	return c.at
}

// point returns the timeline bucket holding t, growing the timeline as
// needed; for t after the window, past.
func (c *collector) point(t time.Duration) *results.TimelinePoint {
	return c.bucketOf(&c.timeline, t, c.total)
}

// svcPoint returns service svc's timeline bucket holding t; for t after
// the window, past.
func (c *collector) svcPoint(svc int, t time.Duration) *results.TimelinePoint {
	return c.bucketOf(&c.svcTimeline[svc], t, c.inFlight[svc])
}

// bucketOf returns the bucket of *tl holding t, growing *tl (within the
// capacity newCollector gave it) with buckets that start with inFlight
// attempts in flight. A time after the window is in none of *tl's
// buckets: bucketOf returns past, cleared, whose counts are dropped.
func (c *collector) bucketOf(tl *[]results.TimelinePoint, t time.Duration, inFlight int) *results.TimelinePoint {
	if t > c.window {
		c.past = results.TimelinePoint{}
		return &c.past
	}
	i := c.bucketAt(t)
	for len(*tl) <= i {
		n := len(*tl)
		*tl = append(*tl, results.TimelinePoint{T: (time.Duration(n) * c.bucket).Seconds(), BucketS: c.bucket.Seconds(), InFlight: inFlight})
	}
	return &(*tl)[i]
}

// started records an attempt; counted marks one of a call that counts
// among the run's calls (callMeta.counted), whose attempts are counted.
func (c *collector) started(svc int, now time.Duration, counted bool) {
	if counted {
		c.attempts++
		for i := range c.windows {
			if c.windows[i].in(now) {
				c.windows[i].attempts++
			}
		}
	}
	c.inFlight[svc]++
	c.peak[svc] = max(c.peak[svc], c.inFlight[svc])
	c.total++
	c.attemptsIn.add(now, 1)
	p := c.point(now)
	p.Started++
	p.InFlight = max(p.InFlight, c.total)
	sp := c.svcPoint(svc, now)
	sp.Started++
	sp.InFlight = max(sp.InFlight, c.inFlight[svc])
}

func (c *collector) ended(svc int, now time.Duration, rateLimited bool) {
	c.inFlight[svc]--
	c.total--
	c.attemptsIn.add(now, -1)
	if rateLimited {
		c.rateLimited++
		c.point(now).RateLimited++
		c.svcPoint(svc, now).RateLimited++
		for i := range c.windows {
			if c.windows[i].in(now) {
				c.windows[i].rateLimited++
			}
		}
	} else {
		c.point(now)
	}
	c.svcPoint(svc, now)
}

// result records one call's final result; only a call that counts among
// the run's calls (counted: callMeta.counted) is in its figures.
func (c *collector) result(r *sched.Result, counted bool) {
	if !counted {
		return
	}
	if r.Finished > c.window {
		// Finished after the run's end: unfinished work, in no figure.
		c.lateCalls++
		c.callSum += (r.Queued + r.Running).Seconds()
		c.leave(r.Finished)
		return
	}
	c.calls++
	c.hedges += int64(r.Hedges)
	if r.HedgeWon {
		c.hedgesWon++
	}
	if r.Err != nil {
		c.failed++
	} else if r.Finished <= c.window {
		c.goodCalls++
	}
	for i := range c.windows {
		if a := &c.windows[i]; a.in(r.Finished) {
			a.calls++
			a.callAttempts += int64(r.Attempts)
			if r.Err == nil {
				a.good++
			}
		}
	}
	c.callLat.add(r.Queued + r.Running)
	c.callSum += (r.Queued + r.Running).Seconds()
	c.leave(r.Finished)
	if r.Attempts > 0 {
		i := min(r.Attempts, 16) - 1
		for len(c.attemptsPerCall) <= i {
			c.attemptsPerCall = append(c.attemptsPerCall, 0)
		}
		c.attemptsPerCall[i]++
		if r.Err != nil {
			for len(c.failedPerAttempts) <= i {
				c.failedPerAttempts = append(c.failedPerAttempts, 0)
			}
			c.failedPerAttempts[i]++
		}
	}
}

// turnBegun counts a turn into the system at now.
func (c *collector) turnBegun(now time.Duration) { c.turnsIn.add(now, 1) }

// turn records a turn that finished at now, its latency and its
// successful tool calls; a turn that finished after the window counts as
// unfinished and in no other figure.
func (c *collector) turn(now, latency time.Duration, failed bool, good int) {
	c.turnsIn.add(now, -1)
	if now > c.window {
		c.late++
		return
	}
	c.turns++
	if !failed {
		c.answeredGood += int64(good)
	}
	c.lastTurn = max(c.lastTurn, now)
	if failed {
		c.failedTurns++
	} else {
		c.okTurnLat.add(latency)
	}
	c.turnLat.add(latency)
}

// modelFailedTurn counts a turn that ended at now failed for reasons of
// the model, when it ended within the window (turn counts it too).
func (c *collector) modelFailedTurn(now time.Duration) {
	if now <= c.window {
		c.modelFailedTurns++
	}
}

// schedulerAnswer adds to t the turns failed for reasons of the model and
// the time to answer among the other turns, those the scheduler could
// answer: the same percentiles as answer_latency_ms over the turns ended
// within the window less the model-failed ones.
func (c *collector) schedulerAnswer(t *results.Tasks) {
	t.ModelFailedTurns = c.modelFailedTurns
	s := c.okTurnLat.answerSummary(uint64(c.turns - c.modelFailedTurns))
	t.SchedulerAnswerLatencyMs = &s
}

// modelStats is one service's own accounting and its limits (in the
// scenario's time).
type modelStats struct {
	stats fakeapi.Stats
	cfg   fakeapi.ServiceConfig
}

// strategyResult builds the strategy's entry of results.json from the
// collector and the services' models.
func (c *collector) strategyResult(name string, maxInFlight int, models []*fakeapi.Model, offered float64) results.StrategyResult {
	ms := make([]modelStats, len(models))
	for i, m := range models {
		ms[i] = modelStats{m.Stats(), m.Config()}
	}
	return c.strategyResultFrom(name, maxInFlight, ms, offered)
}

// strategyResultFrom builds the strategy's entry of results.json from the
// collector and the services' own accounting.
func (c *collector) strategyResultFrom(name string, maxInFlight int, models []modelStats, offered float64) results.StrategyResult {
	r := results.StrategyResult{
		Name: name, MaxInFlight: maxInFlight,
		Turns: c.turns, FailedTurns: c.failedTurns, UnfinishedTurns: c.unfinished + c.late, RefusedTurns: c.refused,
		Calls: c.calls, Attempts: c.attempts,
		TurnLatencyMs: c.turnLat.summary(), OKTurnLatencyMs: c.okTurnLat.summary(),
		AnswerLatencyMs: c.okTurnLat.answerSummary(uint64(c.turns)), CallLatencyMs: c.callLat.summary(),
		GoodputPerS:         round6(float64(c.goodCalls) / c.window.Seconds()),
		AnsweredGoodputPerS: round6(float64(c.answeredGood) / c.window.Seconds()),
		AnsweredTurnsPerS:   round6(float64(c.turns-c.failedTurns) / c.window.Seconds()),
		OfferedTurnsPerS:    round6(offered),
		AchievedTurnsPerS:   round6(float64(c.turns) / c.window.Seconds()),
		TurnsInSystem:       round6(c.turnsIn.mean()),
		AttemptsInService:   round6(c.attemptsIn.mean()),
		RateLimited:         c.rateLimited, Failed: c.failed,
		Hedges: c.hedges, HedgesWon: c.hedgesWon,
		PeakInFlight:    map[string]int{},
		QuotaUsed:       map[string]float64{},
		AttemptsPerCall: c.attemptsPerCall,
		LatencyCDF:      c.turnLat.cdf(100),
		AnswerCDF:       c.okTurnLat.cdfAmong(100, uint64(c.turns)),
		Timeline:        c.timeline,
	}
	r.AttemptsPerFailedCall = c.failedPerAttempts
	for i := range models {
		r.PeakInFlight[c.services[i]] = c.peak[i]
	}
	addServiceBooks(&r, c.services, models, c.window)
	r.WastedWorkS = round6(r.WastedWorkS + c.wastedS)
	r.WastedTokens += c.wastedTokens
	perSecond(r.Timeline)
	if len(c.services) > 1 {
		r.ServiceTimelines = make(map[string][]results.TimelinePoint, len(c.services))
		for i, name := range c.services {
			r.ServiceTimelines[name] = perSecond(c.svcTimeline[i])
		}
	}
	return r
}

// addServiceBooks adds to r what the services' own accounting says of a
// run over window: early retries, wasted work, write races and conflicts,
// and the share of each service's binding limit used (QuotaUsed, which
// must not be nil), in the order of services.
func addServiceBooks(r *results.StrategyResult, services []string, models []modelStats, window time.Duration) {
	minutes := window.Minutes()
	for i, m := range models {
		st, cfg := m.stats, m.cfg
		r.EarlyRetries += st.EarlyRetries
		r.WastedWorkS += st.WastedWorkS
		r.WastedTokens += st.WastedTokens
		r.CancelledWorkS = round6(r.CancelledWorkS + st.CancelledWorkS)
		r.WriteRaces += st.WriteRaces
		r.Conflicts += st.Conflicts
		var used float64
		if cfg.RPM > 0 {
			used = max(used, float64(st.Accepted)/(float64(cfg.RPM)*minutes))
		}
		if cfg.RPS > 0 {
			used = max(used, float64(st.Accepted)/(float64(cfg.RPS)*window.Seconds()))
		}
		if cfg.TPM > 0 {
			used = max(used, float64(st.TokensAccepted)/(float64(cfg.TPM)*minutes))
		}
		if used > 0 {
			r.QuotaUsed[services[i]] = round6(used)
		}
	}
}

// perSecond turns the counts of tl's buckets into rates per second, in
// place, and returns tl.
func perSecond(tl []results.TimelinePoint) []results.TimelinePoint {
	for i := range tl {
		p := &tl[i]
		p.Started = round6(p.Started / p.BucketS)
		p.RateLimited = round6(p.RateLimited / p.BucketS)
	}
	return tl
}

// finishS is the time to finish a finite workload, in seconds: when the
// last of its sessions × turns turns ended (turns: a strategy's turns per
// session, the workload's over its batch_turns). It is 0 for a workload
// without a set number of turns, or one whose turns did not all finish
// (the duration ended first, or the run was cut off).
func (c *collector) finishS(sessions, turns int) float64 {
	if sessions == 0 || turns == 0 || c.unfinished+c.late > 0 || c.turns != int64(sessions)*int64(turns) {
		return 0
	}
	return round6(c.lastTurn.Seconds())
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
