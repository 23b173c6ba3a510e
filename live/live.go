package live

import (
	"context"
	"fmt"
	"slices"

	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/spec"
)

// LiveOptions adjust a live run.
type LiveOptions struct {
	sim.Options
	// TimeScale multiplies every duration and divides every rate (0: 1).
	// Figures are reported in the scenario's own time, divided back.
	TimeScale float64
	// Processes runs the workload on this many sched.Runners at once
	// against the same fake servers (0 or 1: one), as N agent processes
	// behind one API key: OS processes of their own when Worker is set,
	// else Runners in this process, each with its own HTTP transport and
	// (QuotaShared) Redis connection and quota, so they share nothing a
	// separate process would not; the figures of
	// each go to StrategyResult.Processes. 0 takes the scenario's
	// workload.processes (and its process_shares when Shares is nil). With
	// several, the live run is compared with the virtual run of the same
	// fleet (processes, shares and quota modes).
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
	// Worker, when set, runs the processes of a fleet (Processes above 1)
	// as OS processes of their own: for each strategy, Processes members
	// (`simbench worker`, made by Worker) against the fake services this
	// process starts, meeting at a rendezvous on Redis (started as for a
	// shared quota when Redis is ""), merged as report --merge merges them
	// (MergeMembers), with the services' own accounting added. Nil: the
	// processes run as Runners inside this process. Members write no trace
	// and no HDR logs.
	Worker WorkerCommand
	// AllowRedisFallback lets a QuotaShared run go on when Redis does not
	// answer: at the start, RunLive otherwise fails naming the server, and
	// a strategy during which a process fell back to its local share is
	// otherwise marked invalid (it did not measure a shared quota).
	AllowRedisFallback bool
}

// RunLive runs the scenario in real time: the production sched.Runner with
// real HTTP clients against fakeapi servers on 127.0.0.1, one strategy after
// the other, each against fresh servers, its agents driven by the same
// agent loop as a virtual run (agentLoop) on real timers. Client-side
// figures come from the scheduler's results; early retries, wasted work
// and write races from the servers' own accounting. Each strategy's run is
// then compared with the same run in virtual time. A strategy whose run
// the machine could not keep up with (late timers, too few turns started,
// figures off the virtual run's beyond the agree* bounds) gets
// StrategyResult.Invalid with the reason; Results.Invalid collects every
// reason, strategy names first. Each strategy's run holds at most
// LiveInFlight(opts.Budget()) calls in flight: a part that would take it
// past that is not sent (StrategyResult.NotSent, its turn failed), and a
// run that falls more than GiveUpBehind behind its offered load stops
// there; either makes the strategy invalid. A turn that draws more calls than fit
// opts.MaxMemory stops the run with an error wrapping ErrTooLarge, as in a
// virtual run. When ctx ends first, RunLive returns what was measured with
// Partial set, and ctx.Err().
func RunLive(ctx context.Context, sc *scenarios.Scenario, opts LiveOptions) (*results.Results, error) {
	if err := opts.Validate(sc); err != nil {
		return nil, err
	}
	sc, err := opts.Apply(sc)
	if err != nil {
		return nil, err
	}
	fo, err := opts.fleetFor(sc)
	if err != nil {
		return nil, err
	}
	fo.processes = opts.Worker != nil && fo.n > 1
	if fo.processes && (opts.Trace != nil || opts.HDR != nil) {
		return nil, badOption{fmt.Errorf("live: a trace or HDR logs of a fleet of %d processes: its members write neither; run one process for them", fo.n)}
	}
	stopRedis, err := startRedis(&fo, opts.AllowRedisFallback)
	if err != nil {
		return nil, err
	}
	defer stopRedis()
	f := opts.TimeScale
	if f <= 0 {
		f = 1
	}
	ls := &liveSetup{orig: sc, sc: setup.Scale(sc, f), f: f, progress: opts.Progress, trace: opts.Trace, maxTurnCalls: sim.MaxTurnCalls(opts.Budget()), inFlight: LiveInFlight(opts.Budget())}
	res := newLiveResults(sc, &opts, f)
	var own [][]string // each strategy's reasons to be invalid
	for i := range ls.sc.Strategies {
		st := &ls.sc.Strategies[i]
		if opts.Trace != nil {
			if err := opts.Trace.Header(sim.TraceHeader(sc, st.Name, "live")); err != nil {
				return nil, err
			}
		}
		reasons, measured, err := runStrategy(ctx, ls, st, &fo, &opts, res)
		if measured {
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
	if !res.Partial {
		if err := compareVirtual(ctx, virtualTwin(sc, &fo), opts, res, own); err != nil {
			return nil, err
		}
	}
	markInvalid(res, commonReasons(sc, f), own)
	if res.Partial {
		return res, ctx.Err()
	}
	return res, nil
}

// newLiveResults returns the results of a live run of sc (opts applied)
// at time scale f before its strategies run.
func newLiveResults(sc *scenarios.Scenario, opts *LiveOptions, f float64) *results.Results {
	return &results.Results{
		Scenario: sc.Name, Description: sc.Description, Seed: sc.Seed, SimbenchVersion: opts.VersionOrDefault(),
		ScenarioDigest: sim.ScenarioDigest(sc), DurationS: sc.Duration.Seconds(), Mode: "live", TimeScale: f, Limits: setup.LimitsOf(sc),
		Events: setup.EventSpans(sc),
	}
}

// runStrategy runs one strategy of a live run, as a fleet of OS processes
// when fo says so or else in this process, appends its figures and its
// event spans to res, and returns its own reasons to be invalid; measured
// is false when it got no figures at all (then err says why).
func runStrategy(ctx context.Context, ls *liveSetup, st *scenarios.Strategy, fo *fleetOptions, opts *LiveOptions, res *results.Results) (reasons []string, measured bool, err error) {
	if fo.processes {
		r, spans, invalid, err := runFleetStrategy(ctx, ls, st, fo.forStrategy(st), opts)
		if r == nil {
			return nil, false, err
		}
		res.Strategies = append(res.Strategies, *r)
		res.Events = append(res.Events, spans...)
		return strategyReasons(invalid, spans, opts.AllowRedisFallback), true, err
	}
	lr, err := runLiveStrategy(ctx, ls, st, fo.forStrategy(st))
	if lr == nil {
		return nil, false, err
	}
	res.Strategies = append(res.Strategies, lr.result)
	res.Events = append(res.Events, lr.fallbacks...)
	if opts.HDR != nil {
		opts.HDR(collect.HDRLatencies{Strategy: st.Name, Seed: ls.orig.Seed, Turn: lr.m.TurnLat.Hdr(lr.m.Window), Call: lr.m.CallLat.Hdr(lr.m.Window)})
	}
	return strategyReasons(lr.invalid, lr.fallbacks, opts.AllowRedisFallback), true, err
}

// fleetFor returns the processes a live run of sc runs on: the options',
// else the scenario's workload.processes and process_shares.
func (o *LiveOptions) fleetFor(sc *scenarios.Scenario) (fleetOptions, error) {
	if o.Processes == 0 && sc.Workload.Processes > 1 {
		o.Processes = sc.Workload.Processes
		if len(o.Shares) == 0 {
			o.Shares = sc.Workload.ProcessShares
		}
	}
	fo, err := o.fleet()
	if err != nil {
		return fo, err
	}
	fo.anyShared = fo.mode == QuotaShared
	for i := range sc.Strategies {
		if !fo.explicit && sc.Strategies[i].Quota.Mode == scenarios.QuotaShared {
			fo.anyShared = true
		}
	}
	return fo, nil
}

// strategyReasons are a strategy's own reasons to be invalid: the run's
// (invalid, "" when none) and, unless allowFallback, its processes' periods
// on local shares.
func strategyReasons(invalid string, fallbacks []results.EventSpan, allowFallback bool) []string {
	var reasons []string
	if invalid != "" {
		reasons = append(reasons, invalid)
	}
	if why := fallbackReason(fallbacks); why != "" && !allowFallback {
		reasons = append(reasons, why)
	}
	return reasons
}

// commonReasons are the reasons a live run of sc at time scale f is invalid
// for every strategy.
func commonReasons(sc *scenarios.Scenario, f float64) []string {
	var common []string
	for _, svc := range sc.Services {
		if f < 1 && (svc.Headers == spec.HeadersAnthropic || svc.Headers == "standard") {
			common = append(common, fmt.Sprintf("service %q rounds Retry-After to whole seconds, which a time scale of %g stretches %gx", svc.Name, f, 1/f))
		}
	}
	return common
}

// virtualTwin returns sc as the virtual run to compare a live run on the
// fleet fo with: the same processes, shares and quota modes (sc itself for
// one process).
func virtualTwin(sc *scenarios.Scenario, fo *fleetOptions) *scenarios.Scenario {
	if fo.n < 2 {
		return sc
	}
	c := *sc
	c.Workload.Processes, c.Workload.ProcessShares = fo.n, fo.shares
	c.Strategies = slices.Clone(sc.Strategies)
	for i := range c.Strategies {
		c.Strategies[i].Quota.Mode = string(fo.forStrategy(&c.Strategies[i]).mode)
	}
	return &c
}

// compareVirtual runs sc in virtual time and adds to each strategy's
// reasons the figures that should match and do not: the machine did not
// play the scenario as written.
func compareVirtual(ctx context.Context, sc *scenarios.Scenario, opts LiveOptions, res *results.Results, own [][]string) error {
	virtual, err := sim.Run(ctx, sc, sim.Options{Parallel: opts.Parallel})
	if err != nil {
		if ctx.Err() == nil {
			return err
		}
		return nil
	}
	for i := range res.Strategies {
		v := virtual.Strategy(res.Strategies[i].Name)
		if v == nil {
			continue
		}
		if why := disagreement(&res.Strategies[i], v); why != "" {
			own[i] = append(own[i], why)
		}
	}
	return nil
}

// markInvalid sets each strategy's Invalid to the common reasons and its
// own, and Results.Invalid to all of them, strategy names first.
func markInvalid(res *results.Results, common []string, own [][]string) {
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
}
