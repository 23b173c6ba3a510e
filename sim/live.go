package sim

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/httptool"
	"github.com/simbench/simbench/trace"
)

// LiveOptions adjust a live run.
type LiveOptions struct {
	Options
	// TimeScale multiplies every duration and divides every rate (0: 1).
	// Figures are reported in the scenario's own time, divided back.
	TimeScale float64
	// Processes runs the workload on this many sched.Runners at once
	// against the same fake servers (0 or 1: one), as N agent processes
	// behind one API key. They run in this process, each with its own
	// Runner, HTTP transport and (QuotaShared) Redis connection and quota,
	// so they share nothing a separate process would not; the figures of
	// each go to StrategyResult.Processes. 0 takes the scenario's
	// workload.processes (and its process_shares when Shares is nil). With
	// several, the comparison with the virtual run is skipped: the virtual
	// fleet models a shared quota as a store with a fixed round trip, the
	// live one is a real Redis, and their figures need not agree.
	Processes int
	// Shares weights each process's share of the workload (nil: even;
	// otherwise one weight ≥ 0 per process, normalised to sum to 1):
	// closed-model sessions go to processes by these bands, open-model
	// turns by a seeded draw.
	Shares []float64
	// Quota is how the processes share each service's limits, for every
	// strategy ("": each strategy's scenario quota.mode, QuotaFull when it
	// has none). Ignored for one process.
	Quota QuotaMode
	// Redis is the redis:// URL of the server a QuotaShared run uses; ""
	// starts redis-server from PATH on a free 127.0.0.1 port for the run.
	Redis string
}

// Lateness above which a live run is marked invalid: the machine could not
// keep the scenario's timing. Both are in real time.
const (
	lateAbsolute = 5 * time.Millisecond
	lateFraction = 0.10 // of the scenario's mean think time or inter-arrival gap
)

// RunLive runs the scenario in real time: the production sched.Runner with
// real HTTP clients against fakeapi servers on 127.0.0.1, one strategy after
// the other, each against fresh servers. Client-side figures come from the
// scheduler's results; early retries, wasted work and write races from the
// servers' own accounting. Each strategy's run is then compared with the
// same run in virtual time. A strategy whose run the machine could not keep
// up with (late timers, too few turns started, figures off the virtual
// run's beyond the agree* bounds) gets StrategyResult.Invalid with the
// reason; Results.Invalid collects every reason, strategy names first. When ctx ends first, RunLive returns what
// was measured with Partial set, and ctx.Err().
func RunLive(ctx context.Context, sc *scenarios.Scenario, opts LiveOptions) (*Results, error) {
	sc, err := opts.Apply(sc)
	if err != nil {
		return nil, err
	}
	if opts.Processes == 0 && sc.Workload.Processes > 1 {
		// The scenario's fleet, unless the caller chose one.
		opts.Processes = sc.Workload.Processes
		if len(opts.Shares) == 0 {
			opts.Shares = sc.Workload.ProcessShares
		}
	}
	fo, err := opts.fleet()
	if err != nil {
		return nil, err
	}
	fo.anyShared = fo.mode == QuotaShared
	for i := range sc.Strategies {
		if !fo.explicit && sc.Strategies[i].Quota.Mode == scenarios.QuotaShared {
			fo.anyShared = true
		}
	}
	stopRedis, err := startRedis(&fo)
	if err != nil {
		return nil, err
	}
	defer stopRedis()
	f := opts.TimeScale
	if f <= 0 {
		f = 1
	}
	scaled := Scale(sc, f)
	res := &Results{
		Scenario: sc.Name, Description: sc.Description, Seed: sc.Seed, SimbenchVersion: Version,
		ScenarioDigest: ScenarioDigest(sc), DurationS: sc.Duration.Seconds(), Mode: "live", TimeScale: f, Limits: LimitsOf(sc),
		Events: EventSpans(sc),
	}
	// Reasons that apply to every strategy, then each strategy's own.
	var common []string
	for _, svc := range sc.Services {
		if f < 1 && (svc.Headers == scenarios.HeadersAnthropic || svc.Headers == "standard") {
			common = append(common, fmt.Sprintf("service %q rounds Retry-After to whole seconds, which a time scale of %g stretches %gx", svc.Name, f, 1/f))
		}
	}
	var own [][]string
	for i := range scaled.Strategies {
		if opts.Trace != nil {
			if err := opts.Trace.Header(TraceHeader(sc, scaled.Strategies[i].Name, "live")); err != nil {
				return nil, err
			}
		}
		lr, err := runLiveStrategy(ctx, sc, scaled, &scaled.Strategies[i], f, opts.Progress, opts.Trace, fo.forStrategy(&scaled.Strategies[i]))
		if lr != nil {
			res.Strategies = append(res.Strategies, lr.result)
			res.Events = append(res.Events, lr.fallbacks...)
			if opts.HDR != nil {
				opts.HDR(HDRLatencies{Strategy: scaled.Strategies[i].Name, Seed: sc.Seed,
					Turn: lr.m.turnLat.hdr(lr.m.window), Call: lr.m.callLat.hdr(lr.m.window)})
			}
			var reasons []string
			if lr.invalid != "" {
				reasons = append(reasons, lr.invalid)
			}
			own = append(own, reasons)
		}
		if err != nil {
			if ctx.Err() != nil {
				res.Partial = true
				break
			}
			return nil, err
		}
	}
	if !res.Partial && fo.n == 1 {
		// The same run in virtual time: figures that should match and do
		// not mean the machine did not play the scenario as written.
		virtual, err := Run(ctx, sc, Options{Parallel: opts.Parallel})
		if err != nil && ctx.Err() == nil {
			return nil, err
		}
		if err == nil {
			for i := range res.Strategies {
				if v := virtual.strategy(res.Strategies[i].Name); v != nil {
					if why := disagreement(&res.Strategies[i], v); why != "" {
						own[i] = append(own[i], why)
					}
				}
			}
		}
	}
	var all []string
	all = append(all, common...)
	for i := range res.Strategies {
		if reasons := append(slices.Clone(common), own[i]...); len(reasons) > 0 {
			res.Strategies[i].Invalid = joinReasons(reasons)
		}
		for _, r := range own[i] {
			all = append(all, res.Strategies[i].Name+": "+r)
		}
	}
	if len(all) > 0 {
		res.Invalid = joinReasons(all)
	}
	if res.Partial {
		return res, ctx.Err()
	}
	return res, nil
}

// strategy returns the named strategy's result, or nil.
func (r *Results) strategy(name string) *StrategyResult {
	for i := range r.Strategies {
		if r.Strategies[i].Name == name {
			return &r.Strategies[i]
		}
	}
	return nil
}

// How far a live run may drift from the same run in virtual time before it
// is marked invalid. The live driver draws the same workload distributions
// and runs the same scheduler code against the same service model, so
// figures of the distribution's centre must agree up to sampling noise:
// the share of turns answered, the median turn latency and the goodput.
// The tails (p95, p99) and the 429 counts hinge on the exact timing of a
// few requests and differ between any two seeds, so they are not compared.
// A live run at a time scale the machine cannot keep (each request's
// real-time overhead grows 1/scale in scenario time) drifts well beyond
// these bounds: 2-3x on latency at 0.01.
const (
	// agreeShare bounds the difference in answered share, in share points.
	agreeShare = 0.10
	// agreeRelative bounds the relative difference of the median turn
	// latency and of goodput.
	agreeRelative = 0.25
	// agreeMinTurns is the fewest turns each side needs before the figures
	// are compared at all; fewer say too little to call a difference.
	agreeMinTurns = 20
)

// disagreement says how a strategy's live figures differ from its run in
// virtual time beyond the bounds above, or "" when they agree (or there
// are too few turns to tell).
func disagreement(live, virtual *StrategyResult) string {
	if live.Turns+live.FailedTurns < agreeMinTurns || virtual.Turns+virtual.FailedTurns < agreeMinTurns {
		return ""
	}
	var diffs []string
	if l, v := live.AnswerLatencyMs.AnsweredShare, virtual.AnswerLatencyMs.AnsweredShare; math.Abs(l-v) > agreeShare {
		diffs = append(diffs, fmt.Sprintf("answered share %.2f vs %.2f", l, v))
	}
	if l, v := live.TurnLatencyMs.P50, virtual.TurnLatencyMs.P50; relDiff(l, v) > agreeRelative {
		diffs = append(diffs, fmt.Sprintf("p50 turn latency %.0f ms vs %.0f ms", l, v))
	}
	if l, v := live.GoodputPerS, virtual.GoodputPerS; relDiff(l, v) > agreeRelative {
		diffs = append(diffs, fmt.Sprintf("goodput %.2f/s vs %.2f/s", l, v))
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("live figures differ from the same run in virtual time (%s; tolerance: answered share ±%.2f, p50 and goodput ±%.0f%%): try a larger --time-scale",
		strings.Join(diffs, ", "), agreeShare, agreeRelative*100)
}

// relDiff is |a-b| relative to b; 0 when both are 0, +Inf when only b is.
func relDiff(a, b float64) float64 {
	switch {
	case a == b:
		return 0
	case b == 0:
		return math.Inf(1)
	}
	return math.Abs(a-b) / math.Abs(b)
}

func joinReasons(r []string) string {
	s := r[0]
	for _, x := range r[1:] {
		s += "; " + x
	}
	return s
}

// liveRun is one strategy's live run.
type liveRun struct {
	sc      *scenarios.Scenario // scaled
	st      *scenarios.Strategy
	f       float64
	start   time.Time
	srv     *fakeapi.Server
	wl      *workload
	genMu   sync.Mutex // the workload generator is not safe for concurrent use
	mu      sync.Mutex // guards m, late, serial
	m       *collector
	late    *histogram // timer lateness, real time
	serial  uint64
	readers sync.WaitGroup // requests left running after a reader-only cancel
	// orphans carries the requests a reader-only cancel left running; it
	// ends with the strategy's run, so a request the server never answers
	// (a hang) cannot outlive it.
	orphans   context.Context
	endOrphan context.CancelFunc
	invalid   string
	result    StrategyResult
	// abort ends the run early; crash and crashStack hold the first panic
	// of the run's goroutines, raised again by the goroutine that waits for
	// them (repanic), so that it reaches the caller instead of killing the
	// process from a goroutine nobody can recover.
	abort      context.CancelFunc
	crashOnce  sync.Once
	crash      any
	crashStack []byte
	offered    float64
	arrived    int64
	// trace, when set, writes one record per attempt; traceErr holds the
	// first error writing it, which ends the run.
	trace    *liveTrace
	traceErr atomic.Pointer[error]

	// The processes of a run of several (one otherwise): each one's
	// Runner and figures; fallbacks are the periods processes spent on a
	// local share of a shared quota, for Results.Events.
	runners   []*sched.Runner
	procs     []procTally
	fleet     *fleetOptions
	fallbacks []EventSpan
	// net draws the scenario's network delays (scaled), per service.
	net []liveNet
}

// vnow is the scenario's (unscaled) time since the run began.
func (l *liveRun) vnow() time.Duration {
	return time.Duration(float64(time.Since(l.start)) / l.f)
}

// runLiveStrategy runs one strategy live. The client side (workload, the
// scheduler's buckets, backoffs and timeouts) runs on the scaled scenario;
// the fake services run the original one in the scenario's own time, which
// the server plays at TimeScale f, so no limit is scaled up.
func runLiveStrategy(ctx context.Context, orig, sc *scenarios.Scenario, st *scenarios.Strategy, f float64, progress func(string, time.Duration, time.Duration), tw *trace.Writer, fo *fleetOptions) (*liveRun, error) {
	var svcs []fakeapi.ServiceConfig
	names := make([]string, len(orig.Services))
	for i := range orig.Services {
		svcs = append(svcs, ServeConfig(orig, &orig.Services[i]))
		names[i] = orig.Services[i].Name
	}
	// No bound on connections: an unbounded strategy may hold more than the
	// default at once, and queueing them in the accept backlog would show up
	// as latency the scenario does not have.
	srv, err := fakeapi.Start(fakeapi.ServerConfig{Services: svcs, Seed: sc.Seed, TimeScale: f, Warn: io.Discard, MaxConns: -1})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	cfg, err := SchedConfig(sc, st)
	if err != nil {
		return nil, err
	}
	liveBuckets(&cfg, sc, f)
	window := time.Duration(float64(sc.Duration) / f)
	l := &liveRun{sc: sc, st: st, f: f, srv: srv, wl: newWorkload(sc), m: newCollector(names, window), late: newHistogram(), fleet: fo}
	var traceHook, limitHook func(sched.Event)
	if tw != nil {
		l.trace = &liveTrace{w: tw, calls: map[*callMeta]*liveCall{}}
		traceHook = func(ev sched.Event) {
			if ev.Kind == sched.EventRetry {
				l.trace.retry(ev, l.vnow().Seconds(), ev.Delay.Seconds()/f)
			}
		}
	}
	limits := newLimitRecorder(sc, &cfg)
	if limits != nil {
		// The starting limits, as a core of this configuration holds them
		// (the Runner's own core is out of reach on its goroutine).
		core, err := sched.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("strategy %q: %w", st.Name, err)
		}
		limits.begin(core)
		// The Runner calls the hook from the goroutine that owns its core,
		// and Close waits for it, so the steps need no lock.
		limitHook = func(ev sched.Event) {
			if ev.Kind == sched.EventLimit {
				limits.add(ev.Service, l.vnow().Seconds(), ev.N)
			}
		}
	}
	cfg.Hook = chainHooks(limitHook, traceHook)
	l.orphans, l.endOrphan = context.WithCancel(context.Background())
	defer l.endOrphan()
	transport := &http.Transport{MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, IdleConnTimeout: 30 * time.Second}
	defer transport.CloseIdleConnections()
	l.net = newLiveNet(sc)
	cfg.Rand = stream(sc.Seed, "strategy/"+st.Name)
	execFor := func(p int) sched.Executor {
		tr := transport
		if p > 0 { // a process of its own has connections of its own
			tr = &http.Transport{MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, IdleConnTimeout: 30 * time.Second}
		}
		tool := &httptool.Tool{Client: &http.Client{Transport: tr}, Build: l.build}
		if st.CancelAt == scenarios.CancelAtReader {
			return l.counted(p, l.readerOnly(l.delayed(tool.Execute)))
		}
		return l.counted(p, l.delayed(tool.Execute))
	}
	closeRunners, err := l.fleetRunners(cfg, execFor, fo)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	l.abort = cancel
	var wg sync.WaitGroup
	l.start = time.Now()
	// The services' events are timed from the start of the run.
	srv.SetEpoch(l.start)
	// Turns still running well after the end are cut off, as the virtual
	// engine cuts them (and counts them as failed): a run always ends.
	cutoff := time.AfterFunc(sc.Duration+max(sc.Duration/2, time.Duration(float64(time.Minute)*f)), cancel)
	defer cutoff.Stop()
	if progress != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer l.recoverPanic()
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-runCtx.Done():
					return
				case <-t.C:
					progress(st.Name, min(l.vnow(), window), window)
				}
			}
		}()
	}
	w := &sc.Workload
	var sessions sync.WaitGroup
	if w.Sessions > 0 {
		for s := range w.Sessions {
			sessions.Add(1)
			go func() {
				defer sessions.Done()
				defer l.recoverPanic()
				l.session(runCtx, s, fo.sessionProcess(s, w.Sessions))
			}()
		}
	} else {
		l.offered = w.ArrivalRate * f // back in the scenario's turns per second
		sessions.Add(1)
		go func() {
			defer sessions.Done()
			defer l.recoverPanic()
			l.arrivals(runCtx, &sessions)
		}()
	}
	sessions.Wait()
	cancel()
	wg.Wait()
	closeRunners()
	l.endOrphan()
	l.readers.Wait()
	l.repanic()
	l.judge(ctx)

	stats := srv.Stats()
	var models []modelStats
	for i := range sc.Services {
		// The services keep their books in the scenario's own time already.
		models = append(models, modelStats{stats: stats.Services[sc.Services[i].Name], cfg: svcs[i]})
	}
	l.mu.Lock()
	l.result = l.m.strategyResultFrom(st.Name, st.MaxInFlight, models, l.offered)
	l.result.Retry = RetryText(st)
	l.result.FinishS = l.m.finishS(&sc.Workload)
	l.result.LimitTrace = limits.trace()
	l.result.Processes = l.processResults(fo)
	l.mu.Unlock()
	if p := l.traceErr.Load(); p != nil {
		return nil, *p
	}
	if ctx.Err() != nil {
		return l, ctx.Err()
	}
	return l, nil
}

// recoverPanic, deferred at the top of each of the run's goroutines, keeps
// the first panic and ends the run.
func (l *liveRun) recoverPanic() {
	if r := recover(); r != nil {
		l.crashOnce.Do(func() { l.crash, l.crashStack = r, debug.Stack() })
		l.abort()
	}
}

// repanic raises the kept panic, if any, in the calling goroutine, with the
// stack of the goroutine where it happened.
func (l *liveRun) repanic() {
	if l.crash != nil {
		panic(fmt.Sprintf("%v\n\nin a live run's goroutine:\n%s", l.crash, l.crashStack))
	}
}

// liveBuckets keeps the client's token buckets at their unscaled capacity:
// a rate divided by f would otherwise grow the default capacity (a minute's
// worth) by 1/f.
func liveBuckets(cfg *sched.Config, sc *scenarios.Scenario, f float64) {
	for _, svc := range sc.Services {
		s := cfg.Services[svc.Name]
		if s.TokensPerMinute > 0 {
			s.TokenBurst = svc.TokensPerMinute * f
		}
		cfg.Services[svc.Name] = s
	}
}

// session loops one agent's turns until the scenario's duration ends.
func (l *liveRun) session(ctx context.Context, s, p int) {
	end := l.start.Add(l.sc.Duration)
	if !sleepUntil(ctx, l.start.Add(l.sc.Workload.SessionStart(s))) {
		return
	}
	for n := 1; l.sc.Workload.Turns == 0 || n <= l.sc.Workload.Turns; n++ {
		if ctx.Err() != nil || time.Now().After(end) {
			return
		}
		rng := rand.New(rand.NewPCG(l.sc.Seed^0x5e55, uint64(s)<<32|uint64(n)))
		intended := time.Now()
		l.turn(ctx, rng, intended, s, p)
		think := l.wl.think.duration(rng)
		if think == 0 && time.Since(intended) < scaleD(minTurnGap, l.f) {
			think = scaleD(minTurnGap, l.f) // as the engine does: no spinning on instant failures
		}
		wake := time.Now().Add(think)
		if !sleepUntil(ctx, wake) {
			return
		}
		l.noteLate(time.Since(wake))
	}
}

// arrivals starts open-model turns at their intended times.
func (l *liveRun) arrivals(ctx context.Context, turns *sync.WaitGroup) {
	rng := stream(l.sc.Seed, "arrivals")
	procs := stream(l.sc.Seed, "arrivals/processes")
	end := l.start.Add(l.sc.Duration)
	next := l.start
	for n := uint64(1); ; n++ {
		// As in virtual time, no turn starts at or after the end.
		if !next.Before(end) || !sleepUntil(ctx, next) {
			return
		}
		l.noteLate(time.Since(next))
		intended := next
		trng := rand.New(rand.NewPCG(l.sc.Seed^0xa771, n))
		p := 0
		if l.fleet.n > 1 {
			p = l.fleet.pick(procs.Float64())
		}
		turns.Add(1)
		go func() {
			defer turns.Done()
			defer l.recoverPanic()
			l.turn(ctx, trng, intended, -1, p)
		}()
		l.mu.Lock()
		l.arrived++
		l.mu.Unlock()
		next = next.Add(l.wl.interarrival(rng))
	}
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (l *liveRun) noteLate(d time.Duration) {
	l.mu.Lock()
	l.late.add(d)
	l.mu.Unlock()
}

// turn runs one agent turn: the model call, the tool calls, the subagents.
// Latency counts from the intended start, so a slow scheduler cannot hide
// its queueing.
// session is the turn's session, -1 in the open model; p its process.
func (l *liveRun) turn(ctx context.Context, rng *rand.Rand, intended time.Time, session, p int) {
	var lt *liveTurn
	if l.trace != nil {
		lt = &liveTurn{session: int64(session + 1), no: l.trace.turns.Add(1)}
	}
	l.mu.Lock()
	l.m.turnBegun(l.vnow())
	l.procs[p].begun++
	l.mu.Unlock()
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &l.sc.Workload.Cancel
	if c.Probability > 0 && rng.Float64() < c.Probability {
		t := time.AfterFunc(l.wl.cancelAt.duration(rng), cancel)
		defer t.Stop()
	}
	if c.ParentTimeout > 0 {
		var stop context.CancelFunc
		tctx, stop = context.WithTimeout(tctx, c.ParentTimeout)
		defer stop()
	}
	ok := true
	if l.wl.llm != nil {
		ok = l.part(tctx, lt, l.gen(func() []sched.Call { return l.wl.llmCall(rng, l.wl.llm, &l.serial) }), true, 0, p)
	}
	if ok {
		calls := l.gen(func() []sched.Call { return l.wl.calls(rng, l.wl.groups, l.st.SerializeWrites, &l.serial) })
		ok = l.part(tctx, lt, calls, false, 0, p)
		if sg := l.wl.sub; sg != nil && ok {
			var wg sync.WaitGroup
			for range sg.count.count(rng) { // a draw of 0 runs no subagent
				srng := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer l.recoverPanic()
					l.subagent(tctx, lt, srng, p)
				}()
			}
			wg.Wait()
		}
	}
	failed := !ok || tctx.Err() != nil
	lat := time.Duration(float64(time.Since(intended)) / l.f)
	l.mu.Lock()
	l.m.turn(l.vnow(), lat, failed)
	if !failed {
		l.procs[p].answered.add(lat)
	}
	l.mu.Unlock()
}

func (l *liveRun) subagent(ctx context.Context, lt *liveTurn, rng *rand.Rand, p int) {
	sg := l.wl.sub
	var spent int64
	for it := 1; ; it++ {
		budget := int64(0)
		if sg.budget > 0 {
			budget = max(1, sg.budget-spent)
		}
		if sg.llm != nil {
			calls := l.gen(func() []sched.Call { return l.wl.llmCall(rng, sg.llm, &l.serial) })
			spent += calls[0].Tokens
			if !l.part(ctx, lt, calls, true, budget, p) {
				return
			}
		}
		calls := l.gen(func() []sched.Call { return l.wl.calls(rng, sg.groups, l.st.SerializeWrites, &l.serial) })
		for i := range calls {
			spent += calls[i].Tokens
		}
		if len(calls) > 0 {
			l.part(ctx, lt, calls, false, budget, p)
		}
		if it >= sg.maxIterations || (sg.budget > 0 && spent >= sg.budget) || (sg.finish > 0 && rng.Float64() < sg.finish) || ctx.Err() != nil {
			return
		}
	}
}

func (l *liveRun) gen(f func() []sched.Call) []sched.Call {
	l.genMu.Lock()
	defer l.genMu.Unlock()
	return f()
}

// part runs one sched turn on process p's Runner and records its results.
func (l *liveRun) part(ctx context.Context, lt *liveTurn, calls []sched.Call, llm bool, budget int64, p int) bool {
	if len(calls) == 0 {
		return true
	}
	var tag any
	if l.trace != nil {
		tag = l.trace.begin(lt, calls, l.vnow().Seconds())
		defer l.trace.end(calls)
	}
	if !llm {
		l.mu.Lock()
		l.m.enter(l.vnow(), len(calls))
		l.mu.Unlock()
	}
	results, err := l.runners[p].Run(ctx, sched.Turn{Calls: calls, TokenBudget: budget, Tag: tag})
	if results == nil {
		l.mu.Lock()
		l.m.refused++
		if !llm {
			l.m.leaveN(l.vnow(), len(calls))
		}
		l.mu.Unlock()
		return false
	}
	ok := err == nil
	l.mu.Lock()
	now := l.vnow()
	for i := range results {
		r := &results[i]
		r.Queued = time.Duration(float64(r.Queued) / l.f)
		r.Running = time.Duration(float64(r.Running) / l.f)
		r.Finished = now
		l.m.result(r, llm)
		if !llm && r.Class == sched.ClassSuccess && now <= l.m.window {
			l.procs[p].good++
		}
		if r.Err != nil {
			ok = false
		}
	}
	l.mu.Unlock()
	return ok
}

// build makes the HTTP request for one attempt on the service's generic
// endpoint: reads are GETs of the tool's path, writes PUTs of their
// resource (so the service sees overlapping writes), model calls GETs of
// /llm; the tokens (a model call's input and output apart) and the client
// ride in headers.
func (l *liveRun) build(ctx context.Context, call *sched.Call, _ int) (*http.Request, error) {
	meta := call.Payload.(*callMeta)
	method, path := http.MethodGet, "/tools/"+call.Tool
	switch {
	case meta.tool < 0:
		method, path = http.MethodGet, "/llm"
	case meta.write:
		res := call.Resource
		if res == "" {
			res = call.Service
		}
		method, path = http.MethodPut, "/resources/"+res
	}
	req, err := http.NewRequestWithContext(ctx, method, l.srv.URL(call.Service)+path, nil)
	if err != nil {
		return nil, err
	}
	if out := max(0, min(meta.output, call.Tokens)); out > 0 {
		req.Header.Set(fakeapi.TokensHeader, strconv.FormatInt(call.Tokens-out, 10))
		req.Header.Set(fakeapi.OutputTokensHeader, strconv.FormatInt(out, 10))
	} else {
		req.Header.Set(fakeapi.TokensHeader, strconv.FormatInt(call.Tokens, 10))
	}
	req.Header.Set(fakeapi.ClientHeader, meta.client)
	if key := l.sc.Services[meta.svc].ClientKey(); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return req, nil
}

// counted wraps process p's executor with the client-side accounting:
// attempts in flight per service and 429s seen.
func (l *liveRun) counted(p int, exec sched.Executor) sched.Executor {
	return func(ctx context.Context, call *sched.Call, n int) sched.Outcome {
		meta := call.Payload.(*callMeta)
		si, llm := meta.svc, meta.tool < 0
		l.mu.Lock()
		start := l.vnow()
		l.m.started(si, start, llm)
		l.mu.Unlock()
		o := exec(ctx, call, n)
		l.mu.Lock()
		end := l.vnow()
		l.m.ended(si, end, o.Class == sched.ClassRateLimited)
		if o.Class == sched.ClassRateLimited {
			l.procs[p].limited++
		}
		l.mu.Unlock()
		if l.trace != nil {
			if err := l.trace.attempt(call, n, start.Seconds(), end.Seconds(), o, time.Duration(float64(o.RetryAfter)/l.f)); err != nil {
				l.traceErr.CompareAndSwap(nil, &err)
				l.abort()
			}
		}
		return o
	}
}

// readerOnly makes cancellation stop only the reader: the request runs on
// without the attempt's context (until the run ends), its response read and
// thrown away, as a client that abandons a result but not its connection
// does.
func (l *liveRun) readerOnly(exec sched.Executor) sched.Executor {
	return func(ctx context.Context, call *sched.Call, n int) sched.Outcome {
		o := &orphan{done: make(chan sched.Outcome, 1)}
		l.readers.Add(1)
		go func() {
			defer l.readers.Done()
			defer l.recoverPanic()
			start := time.Now()
			out := exec(l.orphans, call, n)
			if o.deliver(out) {
				return
			}
			// Nobody reads this result: the server's work on it is wasted,
			// which the server itself cannot tell from a normal request.
			if out.Class == sched.ClassSuccess {
				l.mu.Lock()
				l.m.wastedS += time.Since(start).Seconds() / l.f
				l.m.wastedTokens += call.Tokens
				l.mu.Unlock()
			}
		}()
		select {
		case out := <-o.done:
			return out
		case <-ctx.Done():
			if out, ok := o.abandon(); ok {
				return out // it arrived as the reader gave up: read it after all
			}
			return sched.Outcome{Class: sched.ClassCancelled, Err: ctx.Err()}
		}
	}
}

// orphan settles, once, whether a reader-only request's result was read or
// abandoned.
type orphan struct {
	mu        sync.Mutex
	delivered bool
	abandoned bool
	done      chan sched.Outcome
}

// deliver hands the result to the reader, unless it gave up first.
func (o *orphan) deliver(out sched.Outcome) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.abandoned {
		return false
	}
	o.delivered = true
	o.done <- out
	return true
}

// abandon gives up on the result, unless it was delivered first.
func (o *orphan) abandon() (sched.Outcome, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.delivered {
		return <-o.done, true
	}
	o.abandoned = true
	return sched.Outcome{}, false
}

// judge marks the run invalid when the machine could not keep its timing.
func (l *liveRun) judge(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	w := &l.sc.Workload
	var gap time.Duration
	if w.Sessions > 0 {
		gap = time.Duration(newSampler(w.Think).mean())
	} else {
		gap = time.Duration(float64(time.Second) / w.ArrivalRate)
		want := w.ArrivalRate * l.sc.Duration.Seconds()
		if float64(l.arrived) < 0.9*want {
			l.invalid = fmt.Sprintf("started %d turns of the %.0f offered", l.arrived, want)
			return
		}
	}
	limit := max(lateAbsolute, time.Duration(lateFraction*float64(gap)))
	if p95 := l.late.quantile(0.95); l.late.n > 0 && p95 > limit {
		l.invalid = fmt.Sprintf("timers fired %v late (p95, real time), above the %v the scenario's timing tolerates", p95.Round(time.Microsecond), limit)
	}
}
