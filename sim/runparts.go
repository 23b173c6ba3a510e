package sim

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
)

// runParts is what the two drivers of a virtual run share, each once: the
// scenario's setup (the processes' schedulers, one fakeapi model, network
// delay and answer reader per service), the agent loop, the metric
// collectors, and the result they make. The fast engine (engine) and the
// reference (reference) differ only in how they carry events and attempts
// between these parts.
type runParts struct {
	sc *scenarios.Scenario
	st *scenarios.Strategy
	// daily marks the calls that met a spent daily quota, by their
	// client name (unique to a call, where a meta is reused), until their
	// results (countDecision, countDaily); nil until one does.
	daily map[string]dailyMark
	// Agents is the agent loop: sessions, turns and subagents.
	Agents *agent.AgentLoop
	// classes gathers each session class's figures (nil without classes).
	classes *collect.ClassStats
	end     time.Duration // no turn starts at or after end
	// stop is when the run ends: the scenario's duration, so that work
	// still running then is unfinished, reported as such and kept out of
	// the figures. (Engine tests move it later to drain every turn.)
	stop time.Duration

	// procs are the agent processes, each with its own scheduler (one
	// unless the workload sets processes).
	procs  []proc
	multi  bool // more than one process: keep per-process figures
	models []*fakeapi.Model
	// net and netRng draw each service's one-way network delays, from a
	// stream of the service's own.
	net    []NetDelay
	netRng []*rand.Rand
	// readers read each service's answers, by service index.
	readers []*answerReader
	// store is the shared quota's store (QuotaShared only).
	store *quotaStore

	transport bool // cancellation reaches the transport
	m         *collect.Collector
	// cutOff is set when the run stopped at its end with work left.
	cutOff bool
	// stoppedAt is when Options.StopWhen ended the run (0: it did not).
	stoppedAt time.Duration
	// limits, when set, records the strategy's adaptive limits as they step.
	limits *collect.LimitRecorder
}

// init sets up strategy st of scenario sc. hook, when not nil, gives each
// process's scheduler an event hook of its own (a trace).
func (r *runParts) init(sc *scenarios.Scenario, st *scenarios.Strategy, hook func(p int) func(sched.Event)) error {
	cfg, err := ProcessSchedConfig(sc, st)
	if err != nil {
		return err
	}
	r.sc, r.st, r.end, r.stop = sc, st, sc.Duration, sc.Duration
	r.transport = st.CancelAt != scenarios.CancelAtReader
	// Process 0's limits are the ones traced (every process of a fleet
	// runs the same strategy).
	r.limits = collect.NewLimitRecorder(sc, &cfg)
	if err := r.newProcesses(cfg, hook); err != nil {
		return err
	}
	r.Agents = agent.NewAgentLoop(sc, st, sc.Workload.Shares(), MaxTurnCalls(DefaultMaxMemory))
	r.classes = collect.NewClassStats(sc)
	names := make([]string, len(sc.Services))
	for i := range sc.Services {
		svc := &sc.Services[i]
		mc := setup.ScenarioModelConfig(sc, svc)
		// The service's stream depends on the seed and the service only: every
		// strategy meets the same latencies and faults in the same order of arrivals.
		m, err := fakeapi.NewModel(mc, setup.Stream(sc.Seed, "service/"+svc.Name))
		if err != nil {
			return fmt.Errorf("service %q: %w", svc.Name, err)
		}
		r.models = append(r.models, m)
		r.net = append(r.net, NewNetDelay(svc.NetworkDelay))
		r.netRng = append(r.netRng, setup.Stream(sc.Seed, "network/"+svc.Name))
		names[i] = svc.Name
		r.readers = append(r.readers, newAnswerReader(m.Config()))
	}
	r.m = collect.NewCollector(names, sc.Duration)
	// The services' decisions are in hand (countDecision).
	r.m.MeasuresDaily = true
	for _, w := range collect.EventWindows(sc) {
		r.m.Windows = append(r.m.Windows, collect.WindowAcc{W: w})
	}
	return nil
}

// newProcesses makes the run's processes from the strategy's scheduler
// configuration. Process 0 draws from the stream a one-process run uses,
// so a scenario without processes runs exactly as before.
func (r *runParts) newProcesses(cfg sched.Config, hook func(p int) func(sched.Event)) error {
	sc, st := r.sc, r.st
	n := max(sc.Workload.Processes, 1)
	r.procs = make([]proc, n)
	r.multi = n > 1
	if st.Quota.Mode == scenarios.QuotaShared {
		r.store = newQuotaStore(st.Quota, n, r.end)
	}
	for p := range r.procs {
		c := cfg
		c.Rand = setup.Stream(sc.Seed, "strategy/"+st.Name)
		if p > 0 {
			c.Rand = setup.Stream(sc.Seed, "strategy/"+st.Name+"/process/"+strconv.Itoa(p))
		}
		var traceHook, limitHook func(sched.Event)
		if hook != nil {
			traceHook = hook(p)
		}
		if p == 0 && r.limits != nil {
			limitHook = r.limits.See
		}
		c.Hook = collect.ChainHooks(limitHook, traceHook)
		var pq *procQuota
		if r.store != nil {
			pq = r.store.connect(c)
			c = sched.CreditConfig(c, pq.shared)
		}
		core, err := sched.New(c)
		if err != nil {
			return fmt.Errorf("strategy %q: %w", st.Name, err)
		}
		if p == 0 && r.limits != nil {
			r.limits.Begin(core)
		}
		r.procs[p] = proc{core: core, quota: pq}
		if r.multi {
			r.procs[p].stats.okTurnLat = collect.NewHistogram()
		}
	}
	return nil
}

// countTurn records turn t's end at now, failed (or cancelled) or not.
func (r *runParts) countTurn(now time.Duration, t *agent.AgentTurn, failed bool) {
	r.m.Turn(now, now-t.Start, failed, t.Good)
	if failed && t.DailyFailedFast {
		r.m.DailyFailedFastTurn(now)
	}
	if t.Abandoned {
		r.m.ModelFailedTurn(now)
	}
	if r.classes != nil {
		r.classes.Turn(t.Session, now, now-t.Start, failed)
	}
	if r.multi && now <= r.m.Window {
		r.procs[t.Proc].stats.turn(now-t.Start, failed)
	}
}

// countResults records the results of part p, whose sched turn is done.
func (r *runParts) countResults(p *agent.AgentPart, res []sched.Result) {
	for i := range res {
		if len(r.daily) > 0 {
			r.countDaily(p, p.Calls[i].Payload.(*agent.CallMeta), &res[i])
		}
		r.m.Result(&res[i], p.Counted)
		if r.classes != nil && p.Counted {
			r.classes.Result(p.Turn.Session, &res[i])
		}
		if r.multi && p.Counted {
			r.procs[p.Turn.Proc].stats.result(&res[i], r.m.Window)
		}
	}
}

// countDecision records what service decided at now for an attempt sent
// as client (the request's client name, its call's): a 429 of a spent
// daily quota marks the call (its first, and how many), for the daily
// quota's figures. The name is the one the request left with: an attempt
// that arrives after its call ended (abandoned on its way) must not mark
// whatever call now holds its call's recycled CallMeta. Its mark is never
// read, since no result of that name comes again.
func (r *runParts) countDecision(client string, now time.Duration, d *fakeapi.Decision) {
	if !d.Daily() {
		return
	}
	if r.daily == nil {
		r.daily = map[string]dailyMark{}
	}
	m, ok := r.daily[client]
	if !ok {
		m.at = now
	}
	m.hits++
	r.daily[client] = m
}

// dailyMark is what a call met of a spent daily quota: when its first
// daily-quota 429 reached the service, and how many of its attempts got
// one.
type dailyMark struct {
	at   time.Duration
	hits int
}

// countDaily records the result res of call meta of part p when the call
// met a spent daily quota, every call, the model's too: an agent spins on
// its model's daily quota as on a tool's. The call's mark goes with it.
func (r *runParts) countDaily(p *agent.AgentPart, meta *agent.CallMeta, res *sched.Result) {
	m, ok := r.daily[meta.Client]
	if !ok {
		return
	}
	delete(r.daily, meta.Client)
	r.m.DailyCall(res, m.at)
	if res.Err != nil && m.hits == 1 && res.Class == sched.ClassRateLimited {
		p.Turn.DailyFailedFast = true
	}
}

// attemptService returns the index of the service attempt a of call meta
// goes to: the call's own, or for a call naming a route the deployment
// the scheduler chose.
func (r *runParts) attemptService(a *sched.Action, meta *agent.CallMeta) int {
	if a.Deployment == a.Call.Service {
		return meta.Svc
	}
	return agent.ServiceIndex(r.sc, a.Deployment)
}

// countStart records an attempt of call meta sent by process p to service
// svc at now.
func (r *runParts) countStart(p, svc int, meta *agent.CallMeta, now time.Duration) {
	r.m.Started(svc, now, meta.Counted)
	if r.multi && meta.Counted {
		r.procs[p].stats.attempts++
	}
}

// countAnswer records an answer of class class read by process p from
// service svc at now.
func (r *runParts) countAnswer(p, svc int, now time.Duration, class sched.Class) {
	limited := class == sched.ClassRateLimited
	r.m.Ended(svc, now, limited)
	if r.multi && limited {
		r.procs[p].stats.rateLimited++
	}
}

// unfinished counts, at the run's end, the turns each process began and
// did not end.
func (r *runParts) countUnfinished() {
	for i := range r.procs {
		n := int64(r.Agents.Unfinished(i))
		r.m.Unfinished += n
		r.procs[i].stats.unfinished = n
	}
}

// result summarises the run.
func (r *runParts) result() results.StrategyResult {
	var offered float64
	if w := &r.sc.Workload; w.Sessions == 0 {
		offered = w.ArrivalRate
	}
	res := r.m.StrategyResult(r.st.Name, r.st.MaxInFlight, r.models, offered)
	res.Retry = setup.RetryText(r.st)
	res.MaxInFlightPerService = setup.ServiceCaps(r.st)
	if r.st.TokenBucket {
		res.Headroom = r.st.Headroom
	}
	if !r.cutOff && r.stoppedAt == 0 {
		res.FinishS = r.m.FinishS(r.sc.Workload.Sessions, r.Agents.Turns)
	}
	if r.stoppedAt > 0 {
		res.StoppedAtS = setup.Round6(r.stoppedAt.Seconds())
	}
	res.Processes = r.processResults()
	if r.classes != nil {
		res.Classes = r.classes.Results()
	}
	res.LimitTrace = r.limits.Trace()
	res.Windows = r.m.WindowResults(collect.StrategyHeadroom(r.st))
	res.Tasks = r.Agents.Tasks()
	if r.Agents.ModelFails() {
		r.m.SchedulerAnswer(res.Tasks)
	}
	return res
}

// processResults returns each process's figures (multi-process runs).
func (r *runParts) processResults() []results.ProcessResult {
	if !r.multi {
		return nil
	}
	out := make([]results.ProcessResult, len(r.procs))
	secs := r.m.Window.Seconds()
	for p := range r.procs {
		s := &r.procs[p].stats
		out[p] = results.ProcessResult{
			Name: "p" + strconv.Itoa(p+1), Share: setup.Round6(r.Agents.Shares[p]),
			Turns: s.turns, FailedTurns: s.failedTurns, UnfinishedTurns: s.unfinished,
			Calls: s.calls, Attempts: s.attempts,
			GoodputPerS:     setup.Round6(float64(s.goodCalls) / secs),
			RateLimited:     s.rateLimited,
			AnswerLatencyMs: s.okTurnLat.AnswerSummary(uint64(s.turns)),
			QuotaRoundTrips: r.procs[p].quota.roundTrips(),
		}
		if n, d := r.procs[p].quota.fallback(r.end); n > 0 {
			out[p].QuotaFallbacks, out[p].QuotaFallbackS = n, setup.Round6(d.Seconds())
		}
	}
	return out
}

// stopped is the error of a run that err stopped at now.
func (r *runParts) stopped(now time.Duration, err error) error {
	return fmt.Errorf("strategy %q at %v: %w", r.st.Name, now, err)
}
