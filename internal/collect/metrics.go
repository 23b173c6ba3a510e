package collect

import (
	"math"
	"slices"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sched"
)

// Collector gathers one strategy's metrics as the run goes, in memory
// bounded by the number of services and timeline buckets, not by calls.
type Collector struct {
	services []string
	Window   time.Duration // the scenario's duration: goodput's denominator

	// Turns counts the turns ended within the window, FailedTurns those
	// of them that failed (whose latency goes to TurnLat, not OkTurnLat).
	Turns, FailedTurns int64
	lastTurn           time.Duration // when the latest turn finished
	// Unfinished counts the turns begun and never ended; late those that
	// ended after the window (a live run's settling, a test's drain): both
	// are unfinished at the end of the run, and late ones stay out of
	// every other figure.
	Unfinished, late int64
	// answeredGood counts the successful tool calls of turns answered in
	// full within the window; LateCalls the counted calls that finished
	// after it.
	answeredGood, LateCalls int64
	// Refused counts the turn parts a scheduler refused (its queue full).
	Refused int64
	// modelFailedTurns counts the turns ended within the window that
	// failed for reasons of the model (workload.llm.success: a model turn
	// wrong and not cured by its retries).
	modelFailedTurns int64
	// MeasuresDaily says the driver sees the services' decisions and
	// feeds DailyCall and DailyFailedFastTurn (the virtual one does; a
	// live client cannot tell a daily quota's 429 from another), so that
	// results carry the daily quota's figures.
	MeasuresDaily bool
	// dailySpin and dailyFailedFast are the daily quota's figures
	// (results.DailyQuota), summed by DailyCall and DailyFailedFastTurn.
	dailySpin       time.Duration
	dailyFailedFast int64
	// Calls counts the counted calls whose result came within the window,
	// Failed those of them whose result was an error.
	Calls, Failed     int64
	goodCalls         int64 // successful tool calls finished within the window
	hedges, hedgesWon int64 // of the calls counted, hedges sent and won
	// Attempts counts the attempts started of counted calls; RateLimited
	// the attempts answered with a rate limit (429).
	Attempts    int64
	RateLimited int64
	// TurnLat holds the latency of every turn ended within the window,
	// OkTurnLat that of the turns answered in full, and CallLat every
	// counted call's queued plus running time within it, in nanoseconds.
	TurnLat, CallLat  *Histogram
	OkTurnLat         *Histogram
	attemptsPerCall   []int64
	failedPerAttempts []int64 // of attemptsPerCall, the calls that gave up

	// Peak is, per service in the order of services, the most attempts in
	// flight at once, client side (inFlight the current count).
	inFlight, Peak []int
	Total          int // attempts in flight, all services

	// Bucket is the width of one timeline point: 1 s, or a whole number
	// of seconds wide enough that the window fits in 1200 points.
	Bucket time.Duration
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
	// Timeline is the run's timeline, one point per Bucket of the window.
	Timeline []results.TimelinePoint
	// SvcTimeline is timeline per service, in the order of services.
	SvcTimeline [][]results.TimelinePoint

	// Work wasted on results nobody read that only the client can see (a
	// live run's reader-only cancels), in the scenario's seconds and tokens.
	WastedS      float64
	WastedTokens int64

	// Calls in the system (submitted, no result yet) integrated over time:
	// a check of Little's law on the engine's own bookkeeping.
	InSystem  int
	Area      float64 // call-seconds
	areaSince time.Duration
	CallSum   float64 // seconds of call latency

	// Turns begun and not finished, and attempts in flight, integrated over
	// the scenario's duration: L for turns and for attempts.
	turnsIn, attemptsIn level

	// Windows count each timed event's figures (nil without events).
	Windows []WindowAcc
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

// Enter and leave track tool calls in the system.
func (c *Collector) Enter(now time.Duration, n int) {
	c.Integrate(now)
	c.InSystem += n
}

// LeaveN takes n calls out of the system at once (a refused turn).
func (c *Collector) LeaveN(now time.Duration, n int) {
	c.Integrate(now)
	c.InSystem -= n
}

func (c *Collector) leave(now time.Duration) {
	c.Integrate(now)
	c.InSystem--
}

// Integrate adds the turns in the system since the last change, times the
// seconds since, to Area (the integral behind TurnsInSystem), up to now.
func (c *Collector) Integrate(now time.Duration) {
	c.Area += float64(c.InSystem) * (now - c.areaSince).Seconds()
	c.areaSince = now
}

// maxTimelinePoints bounds the timeline: longer runs use wider buckets.
const maxTimelinePoints = 1200

// NewCollector returns the collector of a run of the named services whose
// figures count up to window (the scenario's duration).
func NewCollector(services []string, window time.Duration) *Collector {
	c := &Collector{
		services: services, Window: window, TurnLat: NewHistogram(), CallLat: NewHistogram(), OkTurnLat: NewHistogram(),
		inFlight: make([]int, len(services)), Peak: make([]int, len(services)), SvcTimeline: make([][]results.TimelinePoint, len(services)),
		Bucket: time.Second, turnsIn: level{end: window}, attemptsIn: level{end: window},
	}
	if n := window / time.Second; n > maxTimelinePoints {
		c.Bucket = time.Duration(math.Ceil(float64(window)/maxTimelinePoints/float64(time.Second))) * time.Second
	}
	// Every bucket the timelines may hold, allocated now: the buckets up
	// to the one holding the window's end. A live run's collector grows
	// its timelines under a lock the Runners' goroutines wait on, where a
	// timeline must never reallocate.
	n := int(max(window, 0)/c.Bucket) + 1
	c.Timeline = make([]results.TimelinePoint, 0, n)
	for i := range c.SvcTimeline {
		c.SvcTimeline[i] = make([]results.TimelinePoint, 0, n)
	}
	return c
}

// bucketAt returns the index of the timeline bucket holding t (t ≥ 0).
func (c *Collector) bucketAt(t time.Duration) int {
	if t >= c.atFrom && t < c.atTo {
		return c.at
	}
	i := t / c.Bucket
	// A bucket whose end overflows is not kept (atTo < atFrom): every
	// time in it divides again.
	c.at, c.atFrom, c.atTo = int(i), i*c.Bucket, i*c.Bucket+c.Bucket
	return c.at
}

// point returns the timeline bucket holding t, growing the timeline as
// needed; for t after the window, past.
func (c *Collector) point(t time.Duration) *results.TimelinePoint {
	return c.bucketOf(&c.Timeline, t, c.Total)
}

// svcPoint returns service svc's timeline bucket holding t; for t after
// the window, past.
func (c *Collector) svcPoint(svc int, t time.Duration) *results.TimelinePoint {
	return c.bucketOf(&c.SvcTimeline[svc], t, c.inFlight[svc])
}

// bucketOf returns the bucket of *tl holding t, growing *tl (within the
// capacity newCollector gave it) with buckets that start with inFlight
// attempts in flight. A time after the window is in none of *tl's
// buckets: bucketOf returns past, cleared, whose counts are dropped.
func (c *Collector) bucketOf(tl *[]results.TimelinePoint, t time.Duration, inFlight int) *results.TimelinePoint {
	if t > c.Window {
		c.past = results.TimelinePoint{}
		return &c.past
	}
	i := c.bucketAt(t)
	for len(*tl) <= i {
		n := len(*tl)
		*tl = append(*tl, results.TimelinePoint{T: (time.Duration(n) * c.Bucket).Seconds(), BucketS: c.Bucket.Seconds(), InFlight: inFlight})
	}
	return &(*tl)[i]
}

// Started records an attempt; counted marks one of a call that counts
// among the run's calls (callMeta.counted), whose attempts are counted.
func (c *Collector) Started(svc int, now time.Duration, counted bool) {
	if counted {
		c.Attempts++
		for i := range c.Windows {
			if c.Windows[i].in(now) {
				c.Windows[i].attempts++
			}
		}
	}
	c.inFlight[svc]++
	c.Peak[svc] = max(c.Peak[svc], c.inFlight[svc])
	c.Total++
	c.attemptsIn.add(now, 1)
	p := c.point(now)
	p.Started++
	p.InFlight = max(p.InFlight, c.Total)
	sp := c.svcPoint(svc, now)
	sp.Started++
	sp.InFlight = max(sp.InFlight, c.inFlight[svc])
}

// Ended records that an attempt to service svc ended at now, answered
// with a rate limit when rateLimited.
func (c *Collector) Ended(svc int, now time.Duration, rateLimited bool) {
	c.inFlight[svc]--
	c.Total--
	c.attemptsIn.add(now, -1)
	if rateLimited {
		c.RateLimited++
		c.point(now).RateLimited++
		c.svcPoint(svc, now).RateLimited++
		for i := range c.Windows {
			if c.Windows[i].in(now) {
				c.Windows[i].rateLimited++
			}
		}
	} else {
		c.point(now)
	}
	c.svcPoint(svc, now)
}

// Result records one call's final result; only a call that counts among
// the run's calls (counted: callMeta.counted) is in its figures.
func (c *Collector) Result(r *sched.Result, counted bool) {
	if !counted {
		return
	}
	if r.Finished > c.Window {
		// Finished after the run's end: unfinished work, in no figure.
		c.LateCalls++
		c.CallSum += (r.Queued + r.Running).Seconds()
		c.leave(r.Finished)
		return
	}
	c.Calls++
	c.hedges += int64(r.Hedges)
	if r.HedgeWon {
		c.hedgesWon++
	}
	if r.Err != nil {
		c.Failed++
	} else if r.Finished <= c.Window {
		c.goodCalls++
	}
	for i := range c.Windows {
		if a := &c.Windows[i]; a.in(r.Finished) {
			a.calls++
			a.callAttempts += int64(r.Attempts)
			if r.Err == nil {
				a.good++
			}
		}
	}
	c.CallLat.Add(r.Queued + r.Running)
	c.CallSum += (r.Queued + r.Running).Seconds()
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

// TurnBegun counts a turn into the system at now.
func (c *Collector) TurnBegun(now time.Duration) { c.turnsIn.add(now, 1) }

// Turn records a turn that finished at now, its latency and its
// successful tool calls; a turn that finished after the window counts as
// unfinished and in no other figure.
func (c *Collector) Turn(now, latency time.Duration, failed bool, good int) {
	c.turnsIn.add(now, -1)
	if now > c.Window {
		c.late++
		return
	}
	c.Turns++
	if !failed {
		c.answeredGood += int64(good)
	}
	c.lastTurn = max(c.lastTurn, now)
	if failed {
		c.FailedTurns++
	} else {
		c.OkTurnLat.Add(latency)
	}
	c.TurnLat.Add(latency)
}

// DailyCall records call r's time on a spent daily quota: from firstAt,
// when its first daily-quota 429 reached the service, to its end, or to
// the window's end when it ends later.
func (c *Collector) DailyCall(r *sched.Result, firstAt time.Duration) {
	if end := min(r.Finished, c.Window); end > firstAt {
		c.dailySpin += end - firstAt
	}
}

// DailyFailedFastTurn counts a turn that ended failed at now with a call
// that gave up at its first daily-quota 429, when it ended within the
// window.
func (c *Collector) DailyFailedFastTurn(now time.Duration) {
	if now <= c.Window {
		c.dailyFailedFast++
	}
}

// ModelFailedTurn counts a turn that ended at now failed for reasons of
// the model, when it ended within the window (turn counts it too).
func (c *Collector) ModelFailedTurn(now time.Duration) {
	if now <= c.Window {
		c.modelFailedTurns++
	}
}

// SchedulerAnswer adds to t the turns failed for reasons of the model and
// the time to answer among the other turns, those the scheduler could
// answer: the same percentiles as answer_latency_ms over the turns ended
// within the window less the model-failed ones.
func (c *Collector) SchedulerAnswer(t *results.Tasks) {
	t.ModelFailedTurns = c.modelFailedTurns
	s := c.OkTurnLat.AnswerSummary(uint64(c.Turns - c.modelFailedTurns))
	t.SchedulerAnswerLatencyMs = &s
}

// ModelStats is one service's own accounting and its limits (in the
// scenario's time).
type ModelStats struct {
	// Stats is the service's own count of requests, refusals and work.
	Stats fakeapi.Stats
	// Cfg is the service's configuration: its limits and latency model.
	Cfg fakeapi.ServiceConfig
}

// StrategyResult builds the strategy's entry of results.json from the
// collector and the services' models.
func (c *Collector) StrategyResult(name string, maxInFlight int, models []*fakeapi.Model, offered float64) results.StrategyResult {
	ms := make([]ModelStats, len(models))
	for i, m := range models {
		ms[i] = ModelStats{m.Stats(), m.Config()}
	}
	return c.StrategyResultFrom(name, maxInFlight, ms, offered)
}

// StrategyResultFrom builds the strategy's entry of results.json from the
// collector and the services' own accounting.
func (c *Collector) StrategyResultFrom(name string, maxInFlight int, models []ModelStats, offered float64) results.StrategyResult {
	r := results.StrategyResult{
		Name: name, MaxInFlight: maxInFlight,
		Turns: c.Turns, FailedTurns: c.FailedTurns, UnfinishedTurns: c.Unfinished + c.late, RefusedTurns: c.Refused,
		Calls: c.Calls, Attempts: c.Attempts,
		TurnLatencyMs: c.TurnLat.Summary(), OKTurnLatencyMs: c.OkTurnLat.Summary(),
		AnswerLatencyMs: c.OkTurnLat.AnswerSummary(uint64(c.Turns)), CallLatencyMs: c.CallLat.Summary(),
		GoodputPerS:         setup.Round6(float64(c.goodCalls) / c.Window.Seconds()),
		AnsweredGoodputPerS: setup.Round6(float64(c.answeredGood) / c.Window.Seconds()),
		AnsweredTurnsPerS:   setup.Round6(float64(c.Turns-c.FailedTurns) / c.Window.Seconds()),
		OfferedTurnsPerS:    setup.Round6(offered),
		AchievedTurnsPerS:   setup.Round6(float64(c.Turns) / c.Window.Seconds()),
		TurnsInSystem:       setup.Round6(c.turnsIn.mean()),
		AttemptsInService:   setup.Round6(c.attemptsIn.mean()),
		RateLimited:         c.RateLimited, Failed: c.Failed,
		Hedges: c.hedges, HedgesWon: c.hedgesWon,
		PeakInFlight:    map[string]int{},
		QuotaUsed:       map[string]float64{},
		AttemptsPerCall: c.attemptsPerCall,
		LatencyCDF:      c.TurnLat.Cdf(100),
		AnswerCDF:       c.OkTurnLat.CdfAmong(100, uint64(c.Turns)),
		Timeline:        c.Timeline,
	}
	r.AttemptsPerFailedCall = c.failedPerAttempts
	for i := range models {
		if c.MeasuresDaily && models[i].Cfg.Daily.Enabled() {
			r.DailyQuota = &results.DailyQuota{FailedFastTurns: c.dailyFailedFast, SpinS: setup.Round6(c.dailySpin.Seconds())}
			break
		}
	}
	for i := range models {
		r.PeakInFlight[c.services[i]] = c.Peak[i]
	}
	AddServiceBooks(&r, c.services, models, c.Window)
	r.WastedWorkS = setup.Round6(r.WastedWorkS + c.WastedS)
	r.WastedTokens += c.WastedTokens
	perSecond(r.Timeline)
	if len(c.services) > 1 {
		r.ServiceTimelines = make(map[string][]results.TimelinePoint, len(c.services))
		for i, name := range c.services {
			r.ServiceTimelines[name] = perSecond(c.SvcTimeline[i])
		}
	}
	return r
}

// AddServiceBooks adds to r what the services' own accounting says of a
// run over window: early retries, wasted work, write races and conflicts,
// and the share of each service's binding limit used (QuotaUsed, which
// must not be nil), in the order of services.
func AddServiceBooks(r *results.StrategyResult, services []string, models []ModelStats, window time.Duration) {
	minutes := window.Minutes()
	for i, m := range models {
		st, cfg := m.Stats, m.Cfg
		r.EarlyRetries += st.EarlyRetries
		r.WastedWorkS += st.WastedWorkS
		r.WastedTokens += st.WastedTokens
		r.CancelledWorkS = setup.Round6(r.CancelledWorkS + st.CancelledWorkS)
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
			r.QuotaUsed[services[i]] = setup.Round6(used)
		}
		for _, k := range st.Keys {
			if r.Keys == nil {
				r.Keys = map[string][]results.KeyShare{}
			}
			r.Keys[services[i]] = append(r.Keys[services[i]], KeyShare(results.KeyShare{Key: k.Key, Project: k.Project, Admitted: k.Admitted,
				RateLimited: k.RateLimited, RateLimitedBy: k.RateLimitedBy}))
		}
	}
}

// perSecond turns the counts of tl's buckets into rates per second, in
// place, and returns tl.
func perSecond(tl []results.TimelinePoint) []results.TimelinePoint {
	for i := range tl {
		p := &tl[i]
		p.Started = setup.Round6(p.Started / p.BucketS)
		p.RateLimited = setup.Round6(p.RateLimited / p.BucketS)
	}
	return tl
}

// FinishS is the time to finish a finite workload, in seconds: when the
// last of its sessions × turns turns ended (turns: a strategy's turns per
// session, the workload's over its batch_turns). It is 0 for a workload
// without a set number of turns, or one whose turns did not all finish
// (the duration ended first, or the run was cut off).
func (c *Collector) FinishS(sessions, turns int) float64 {
	if sessions == 0 || turns == 0 || c.Unfinished+c.late > 0 || c.Turns != int64(sessions)*int64(turns) {
		return 0
	}
	return setup.Round6(c.lastTurn.Seconds())
}

// KeyShare returns k with RateLimitedShare set from its counts: its 429s
// over its requests, rounded as results record (0 when it sent nothing).
// A run's collector and a fleet's merge both set the share through it.
func KeyShare(k results.KeyShare) results.KeyShare {
	k.RateLimitedShare = 0
	if n := k.Admitted + k.RateLimited; n > 0 {
		k.RateLimitedShare = setup.Round6(float64(k.RateLimited) / float64(n))
	}
	return k
}

// AddKeys adds the per-key counts of from to to, key by key (a key is its
// service, project and name), and returns to with every share recomputed:
// a fleet's members each count the requests they sent.
func AddKeys(to, from map[string][]results.KeyShare) map[string][]results.KeyShare {
	for svc, ks := range from {
		if to == nil {
			to = map[string][]results.KeyShare{}
		}
		for _, k := range ks {
			i := slices.IndexFunc(to[svc], func(t results.KeyShare) bool { return t.Key == k.Key && t.Project == k.Project })
			if i < 0 {
				to[svc] = append(to[svc], results.KeyShare{Key: k.Key, Project: k.Project})
				i = len(to[svc]) - 1
			}
			t := &to[svc][i]
			t.Admitted += k.Admitted
			t.RateLimited += k.RateLimited
			if t.RateLimitedBy == nil && k.RateLimitedBy != nil {
				t.RateLimitedBy = map[string]int64{}
			}
			for lvl, n := range k.RateLimitedBy {
				t.RateLimitedBy[lvl] += n
			}
			*t = KeyShare(*t)
		}
	}
	return to
}
