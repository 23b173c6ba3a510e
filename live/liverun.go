package live

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/httptool"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/trace"
)

// liveSetup is what every strategy's live run of a scenario shares.
type liveSetup struct {
	orig *scenarios.Scenario // the scenario, in its own time: the agent loop's and the services'
	sc   *scenarios.Scenario // the scenario scaled by f: the schedulers'
	f    float64             // the time scale
	// progress, when set, is called with the scenario time played so far.
	progress     func(string, time.Duration, time.Duration)
	trace        *trace.Writer
	maxTurnCalls int
	// inFlight is the most calls a strategy's run (each of its processes)
	// holds in flight, and its connections per host (LiveInFlight).
	inFlight int
	// member, when set, makes the run one member of a fleet whose other
	// members run elsewhere (RunMember): against a provider it does not
	// start, from a start its members agree on.
	member *memberSetup
}

// liveRun is one strategy's live run: the real-time shell around the agent
// loop (agents), which the run's goroutine drives (drive) while the
// Runners' goroutines run the attempts.
type liveRun struct {
	sc     *scenarios.Scenario // scaled
	st     *scenarios.Strategy
	f      float64
	start  time.Time
	srv    *fakeapi.Server
	agents *agent.AgentLoop
	mu     sync.Mutex // guards m, late, arrived and procs
	m      *collect.Collector
	late   *collect.Histogram // timer lateness, real time
	// shell is the driving goroutine's own state (see livedrive.go).
	shell   liveShell
	readers sync.WaitGroup // requests left running after a reader-only cancel
	// orphans carries the requests a reader-only cancel left running; it
	// ends with the strategy's run, so a request the server never answers
	// (a hang) cannot outlive it.
	orphans   context.Context
	endOrphan context.CancelFunc
	invalid   string
	result    results.StrategyResult
	// noAnswer counts the attempts that got no HTTP answer from the
	// provider (guarded by mu); noAnswerErr is the first one's error.
	noAnswer    int64
	noAnswerErr error
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
	fallbacks []results.EventSpan
	// net draws the scenario's network delays (scaled), per service.
	net []liveNet
	// A fleet member's run (RunMember): member is 1 + its process (0: a
	// run of the whole fleet), urls each service's base URL at the
	// provider, quotaKey the shared quota's key every member uses, and
	// clientPrefix tells its clients apart from the other members' at
	// the provider.
	member       int
	urls         map[string]string
	quotaKey     string
	clientPrefix string
}

// url returns the base URL of the named service.
func (l *liveRun) url(service string) string {
	if l.urls != nil {
		return l.urls[service]
	}
	return l.srv.URL(service)
}

// vnow is the scenario's (unscaled) time since the run began.
func (l *liveRun) vnow() time.Duration {
	return time.Duration(float64(time.Since(l.start)) / l.f)
}

// realAt is the real time at which the scenario's time reaches at.
func (l *liveRun) realAt(at time.Duration) time.Time {
	return l.start.Add(time.Duration(float64(at) * l.f))
}

// runLiveStrategy runs one strategy live. The agent loop and the fake
// services run the original scenario in its own time, which the shell and
// the server play at time scale f (so no limit is scaled up); the client
// side (the schedulers' buckets, backoffs and timeouts, the network delays)
// runs on the scaled scenario in real time.
func runLiveStrategy(ctx context.Context, ls *liveSetup, st *scenarios.Strategy, fo *fleetOptions) (*liveRun, error) {
	sc, f := ls.sc, ls.f
	l, svcs, err := startLiveRun(ls, st, fo)
	if err != nil {
		return nil, err
	}
	if l.srv != nil {
		defer l.srv.Close()
	}
	cfg, limits, err := l.schedConfig(ls.trace)
	if err != nil {
		return nil, err
	}
	l.orphans, l.endOrphan = context.WithCancel(context.Background())
	defer l.endOrphan()
	transport := newTransport(ls.inFlight)
	defer transport.CloseIdleConnections()
	closeRunners, err := l.fleetRunners(cfg, l.executors(transport), fo)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	l.abort = cancel
	if ls.member != nil {
		if l.start, err = ls.member.meet(runCtx, st.Name); err != nil {
			closeRunners()
			return nil, err
		}
		if !sleepUntil(runCtx, l.start) {
			closeRunners()
			return nil, ctx.Err()
		}
	} else {
		l.start = time.Now()
		// The services' events are timed from the start of the run.
		l.srv.SetEpoch(l.start)
	}
	// Turns still running well after the end are cut off, as the virtual
	// engine cuts them (and reports them unfinished): a run always ends.
	cutoff := time.AfterFunc(time.Until(l.realAt(sim.DrainLimit(ls.orig.Duration))), cancel)
	defer cutoff.Stop()
	stopProgress := l.showProgress(runCtx, ls.progress)
	if sc.Workload.Sessions == 0 {
		l.offered = sc.Workload.ArrivalRate * f // back in the scenario's turns per second
	}
	loopErr := l.drive(runCtx)
	cancel()
	closeRunners()
	l.shell.parts.Wait()
	stopProgress()
	l.endOrphan()
	l.readers.Wait()
	l.repanic()
	if loopErr != nil {
		return nil, loopErr
	}
	l.judge(ctx)
	l.collect(svcs, limits, fo)
	if p := l.traceErr.Load(); p != nil {
		return nil, *p
	}
	if ctx.Err() != nil {
		return l, ctx.Err()
	}
	return l, nil
}

// startLiveRun starts the fake services of a strategy's live run and
// returns the run and the services' configurations.
func startLiveRun(ls *liveSetup, st *scenarios.Strategy, fo *fleetOptions) (*liveRun, []fakeapi.ServiceConfig, error) {
	orig := ls.orig
	var svcs []fakeapi.ServiceConfig
	names := make([]string, len(orig.Services))
	for i := range orig.Services {
		svcs = append(svcs, setup.ServeConfig(orig, &orig.Services[i]))
		names[i] = orig.Services[i].Name
	}
	l := &liveRun{sc: ls.sc, st: st, f: ls.f, m: collect.NewCollector(names, orig.Duration), late: collect.NewHistogram(), fleet: fo,
		agents: agent.NewAgentLoop(orig, st, fo.shares, ls.maxTurnCalls), net: newLiveNet(ls.sc)}
	l.shell.load.bound = ls.inFlight
	if m := ls.member; m != nil {
		l.agents.Member, l.member, l.quotaKey = m.index+1, m.index+1, m.key(st.Name)
		l.clientPrefix = "p" + strconv.Itoa(m.index+1) + "-"
		l.urls = make(map[string]string, len(names))
		for _, name := range names {
			l.urls[name] = m.baseURL + "/" + name
		}
	} else {
		// No bound on connections: an unbounded strategy may hold more than
		// the default at once, and queueing them in the accept backlog would
		// show up as latency the scenario does not have.
		srv, err := fakeapi.Start(fakeapi.ServerConfig{Services: svcs, Seed: ls.sc.Seed, TimeScale: ls.f, Warn: io.Discard, MaxConns: -1})
		if err != nil {
			return nil, nil, err
		}
		l.srv = srv
	}
	if ls.trace != nil {
		l.trace = &liveTrace{W: ls.trace, Calls: map[*agent.CallMeta]*liveCall{}}
	}
	return l, svcs, nil
}

// schedConfig returns the strategy's scheduler configuration for the
// scaled scenario, with hooks that trace its retries and record its
// adaptive limits as they step.
func (l *liveRun) schedConfig(tw *trace.Writer) (sched.Config, *collect.LimitRecorder, error) {
	cfg, err := setup.SchedConfig(l.sc, l.st)
	if err != nil {
		return cfg, nil, err
	}
	liveBuckets(&cfg, l.sc, l.f)
	var traceHook, limitHook func(sched.Event)
	if tw != nil {
		traceHook = func(ev sched.Event) {
			if ev.Kind == sched.EventRetry {
				l.trace.Retry(ev, l.vnow().Seconds(), ev.Delay.Seconds()/l.f)
			}
		}
	}
	limits := collect.NewLimitRecorder(l.sc, &cfg)
	if limits != nil {
		// The starting limits, as a core of this configuration holds them
		// (the Runner's own core is out of reach on its goroutine).
		core, err := sched.New(cfg)
		if err != nil {
			return cfg, nil, fmt.Errorf("strategy %q: %w", l.st.Name, err)
		}
		limits.Begin(core)
		// The Runner calls the hook from the goroutine that owns its core,
		// and Close waits for it, so the steps need no lock.
		limitHook = func(ev sched.Event) {
			if ev.Kind == sched.EventLimit {
				limits.Add(ev.Service, l.vnow().Seconds(), ev.N)
			}
		}
	}
	cfg.Hook = collect.ChainHooks(limitHook, traceHook)
	cfg.Rand = setup.Stream(l.sc.Seed, "strategy/"+l.st.Name)
	return cfg, limits, nil
}

// executors returns the executor of each process: HTTP requests through
// httptool, with the scenario's network delay, cancelled at the reader
// only when the strategy says so, and counted.
func (l *liveRun) executors(transport *http.Transport) func(p int) sched.Executor {
	return func(p int) sched.Executor {
		tr := transport
		if p > 0 { // a process of its own has connections of its own
			tr = newTransport(l.shell.load.bound)
		}
		tool := &httptool.Tool{Client: &http.Client{Transport: tr}, Build: l.build}
		if l.st.CancelAt == scenarios.CancelAtReader {
			return l.counted(p, l.readerOnly(l.delayed(tool.Execute)))
		}
		return l.counted(p, l.delayed(tool.Execute))
	}
}

// showProgress reports the run's progress every 100 ms of real time until
// ctx ends, and returns a func that waits for it to stop.
func (l *liveRun) showProgress(ctx context.Context, progress func(string, time.Duration, time.Duration)) (wait func()) {
	if progress == nil {
		return func() {}
	}
	window := l.m.Window
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer l.recoverPanic()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				progress(l.st.Name, min(l.vnow(), window), window)
			}
		}
	}()
	return wg.Wait
}

// collect makes the strategy's result from the collector and the servers'
// own accounting.
func (l *liveRun) collect(svcs []fakeapi.ServiceConfig, limits *collect.LimitRecorder, fo *fleetOptions) {
	var stats fakeapi.ServerStats
	if l.srv != nil { // a fleet member's provider keeps its own books (none here)
		stats = l.srv.Stats()
	}
	var models []collect.ModelStats
	for i := range l.sc.Services {
		// The services keep their books in the scenario's own time already.
		models = append(models, collect.ModelStats{Stats: stats.Services[l.sc.Services[i].Name], Cfg: svcs[i]})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for p := range l.procs {
		l.m.Unfinished += int64(l.agents.Unfinished(p))
	}
	l.result = l.m.StrategyResultFrom(l.st.Name, l.st.MaxInFlight, models, l.offered)
	l.result.Retry = setup.RetryText(l.st)
	l.result.MaxInFlightPerService = setup.ServiceCaps(l.st)
	l.result.FinishS = l.m.FinishS(l.sc.Workload.Sessions, l.agents.Turns)
	l.result.LimitTrace = limits.Trace()
	l.result.Processes = l.processResults(fo)
	l.result.Tasks = l.agents.Tasks()
	l.result.NotSent = l.shell.load.notSent
	if l.agents.ModelFails() {
		l.m.SchedulerAnswer(l.result.Tasks)
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
