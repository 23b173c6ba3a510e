package sim

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/trace"
)

// DefaultVersion is the simbench version written into results when
// Options.Version is empty.
const DefaultVersion = "dev"

// GCPercent is the garbage collector setting the simbench binary runs
// simulations with: the heap peaks near three times the live heap. The
// engine allocates briefly-lived turn state over a live heap bounded by the
// work in flight, so the default (100) collects often: measured with
// runtime/metrics on BenchmarkEngine/scenario (2 shared cores), the
// collector takes 6–7% of the CPU at 100, 5–5.5% at 200 and 3% at 400. On
// tier3 at 10,000 agents (BenchmarkEngine10M, a live heap of 43 MB),
// alternating runs gave 50: 15% of the CPU in the collector, 87 MB
// resident; 100: 7%, 107 MB; 200: 3.3%, 150–162 MB; 400: 2%, 250 MB. The
// live heap follows the work in flight, so a larger run has a larger heap
// at the same share of the CPU; 400 saves 1–2% of the CPU for 1.6 times the
// memory, and a memory limit would save no more than that share. A library
// caller keeps its own setting.
const GCPercent = 200

// Options adjust a run without editing the scenario.
type Options struct {
	// Strategies selects strategies by name (nil: all, in file order).
	Strategies []string
	// Seed, when not nil, replaces the scenario's seed.
	Seed *uint64
	// Duration, when > 0, replaces the scenario's duration.
	Duration time.Duration
	// Parallel caps strategies simulated at once (0: the number of CPUs).
	Parallel int
	// Seeds is the number of seeds RunSeeds and Sweep run each strategy
	// with (0 or 1: the scenario's seed alone).
	Seeds int
	// Progress, when set, is called from the strategies' goroutines with the
	// virtual time simulated so far out of total. It must be safe for
	// concurrent use.
	Progress func(strategy string, done, total time.Duration)
	// MaxMemory is the run's memory budget in bytes (0: DefaultMaxMemory;
	// below 0: none). Run refuses a run whose Estimate passes it, and stops
	// a run in which one turn draws more calls than fit it, with ErrTooLarge.
	MaxMemory int64
	// Trace, when set, receives one record per attempt of every strategy
	// (trace format version 1): a section per strategy, headed by its
	// trace.Header and in strategy order, so the same scenario and seed
	// give the same bytes. Run writes what was measured, also when ctx
	// ends the run early; the caller closes the writer (or aborts it when
	// Run fails). Live runs write one too.
	Trace *trace.Writer
	// HDR, when set, is called once per strategy when the run is done, in
	// strategy order, with its turn and call latencies as HdrHistograms
	// (microseconds), also when ctx ends the run early; RunSeeds calls it
	// once per seed. Virtual runs only: the histograms are converted from
	// the simulator's own when it is asked, so a run without it pays
	// nothing.
	HDR func(collect.HDRLatencies)
	// Version is the simbench version the results record as
	// simbench_version ("": DefaultVersion).
	Version string
	// Cache, when set, holds finished runs: Run reads a strategy's run at
	// a seed from it instead of simulating it, and stores each run it
	// simulates to the end. Runs with Trace set neither read nor store.
	Cache *Cache
	// StopWhen, when set, is asked, from the strategies' goroutines (it
	// must be safe for concurrent use), every 1,024 events with the
	// strategy's name and what its run has counted so far; when it
	// returns true the run ends there: the strategy's result covers the
	// virtual time simulated and its StoppedAtS says when it stopped.
	StopWhen func(strategy string, w Watch) bool
	// StopKey names StopWhen's rule for the cache: a run with StopWhen is
	// read from and stored under a key holding StopKey, whether it stopped
	// or not, so that it reads the same with a cache and without. With
	// StopWhen and no StopKey the cache is not used.
	StopKey string
}

// VersionOrDefault is the simbench version the results record.
func (o *Options) VersionOrDefault() string {
	if o.Version == "" {
		return DefaultVersion
	}
	return o.Version
}

// Apply returns a copy of sc with the options' overrides applied, or an
// error naming an unknown strategy.
func (o *Options) Apply(sc *scenarios.Scenario) (*scenarios.Scenario, error) {
	c := *sc
	if o.Seed != nil {
		c.Seed = *o.Seed
	}
	if o.Duration > 0 {
		c.Duration = o.Duration
	}
	if len(o.Strategies) > 0 {
		c.Strategies = nil
		var unknown []string
		for _, name := range o.Strategies {
			if st := sc.Strategy(name); st != nil {
				c.Strategies = append(c.Strategies, *st)
			} else {
				unknown = append(unknown, name)
			}
		}
		if len(unknown) > 0 {
			var have []string
			for _, st := range sc.Strategies {
				have = append(have, st.Name)
			}
			return nil, fmt.Errorf("scenario %q has no strategy %s (it has %s)", sc.Name, strings.Join(unknown, ", "), strings.Join(have, ", "))
		}
	}
	return &c, nil
}

// Run simulates every strategy of the scenario in virtual time and returns
// the results. Strategies run in parallel, each in its own deterministic
// engine, so the results do not depend on scheduling: the same scenario and
// seed give the same results, bit for bit. When ctx ends first, Run returns
// what was measured with Partial set, and ctx.Err().
//
// Before it allocates anything, Run estimates the run's memory (Estimate)
// and returns a *TooLargeError, which wraps ErrTooLarge, when the estimate
// passes opts.MaxMemory; a turn that draws more calls than fit the budget
// stops the run with an error wrapping ErrTooLarge and no results.
func Run(ctx context.Context, sc *scenarios.Scenario, opts Options) (*results.Results, error) {
	sc, err := opts.Apply(sc)
	if err != nil {
		return nil, err
	}
	par := parallel(opts, len(sc.Strategies))
	budget := opts.Budget()
	if est := estimate(sc, par); budget > 0 && !(est.PeakBytes <= float64(budget)) {
		return nil, &TooLargeError{Estimate: est, Budget: budget}
	}
	r := &virtualRun{sc: sc, opts: &opts, res: newResults(sc, &opts), cache: opts.Cache}
	if opts.StopWhen != nil && opts.StopKey == "" {
		r.cache = nil // a run that may stop early is not the cached whole one
	}
	if opts.Trace != nil {
		if r.secs, err = openSections(opts.Trace, sc); err != nil {
			return nil, err
		}
		defer closeSections(r.secs)
		r.cache = nil // a trace needs the attempts, which no entry holds
	}
	if err := r.prepare(budget); err != nil {
		return nil, err
	}
	r.complete = runEngines(ctx, r.engines, par, r.res, r.progress)
	for _, e := range r.engines {
		if e != nil && e.Err != nil {
			return nil, e.Err
		}
	}
	if err := r.finish(); err != nil {
		return nil, err
	}
	// A run read whole from the cache after ctx ended is complete, but the
	// caller asked to stop: say so, as a run that simulated would.
	if r.res.Partial || ctx.Err() != nil {
		return r.res, ctx.Err()
	}
	return r.res, nil
}

// virtualRun is one call of Run: its scenario (options applied), the
// results it fills, and each strategy's engine (nil: read from the cache)
// with, once the engines have run, whether it simulated to the end.
type virtualRun struct {
	sc       *scenarios.Scenario
	opts     *Options
	res      *results.Results
	cache    *Cache // nil: none, or a traced run
	secs     []section
	engines  []*engine
	cached   []collect.HDRLatencies
	complete []bool
}

// prepare reads each strategy's run from the cache where it holds one and
// builds an engine for each other one, whose turns may draw at most the
// calls the memory budget (bytes) allows. A read-only cache missing runs
// gives a *MissError naming every missing one.
func (r *virtualRun) prepare(budget int64) error {
	sc := r.sc
	r.engines = make([]*engine, len(sc.Strategies))
	r.cached = make([]collect.HDRLatencies, len(sc.Strategies))
	var misses []RunKey
	for i := range sc.Strategies {
		if c := r.cache; c != nil {
			key := r.key(i)
			if res, l, ok := c.load(key); ok {
				r.res.Strategies[i], r.cached[i] = *res, l
				if r.opts.Progress != nil {
					r.opts.Progress(res.Name, sc.Duration, sc.Duration)
				}
				continue
			}
			if c.ReadOnly() {
				c.miss(key, sc, &sc.Strategies[i], r.opts.StopWhen)
				misses = append(misses, key)
				continue
			}
		}
		var tw *trace.Writer
		if r.secs != nil {
			tw = r.secs[i].w
		}
		e, err := newTracedEngine(sc, &sc.Strategies[i], tw)
		if err != nil {
			return err
		}
		e.Agents.MaxTurnCalls = MaxTurnCalls(budget)
		if stop := r.opts.StopWhen; stop != nil {
			name := sc.Strategies[i].Name
			e.stopWhen = func(w Watch) bool { return stop(name, w) }
		}
		r.engines[i] = e
	}
	if len(misses) > 0 {
		return &MissError{Keys: misses}
	}
	return nil
}

// key is the cache key of strategy i's run.
func (r *virtualRun) key(i int) RunKey {
	k := r.cache.runKey(r.sc, &r.sc.Strategies[i])
	if r.opts.StopWhen != nil {
		k.Stop = r.opts.StopKey
	}
	return k
}

// progress returns the progress callback of strategy name's engine (nil
// when the options ask for none).
func (r *virtualRun) progress(name string) func(time.Duration) {
	if r.opts.Progress == nil {
		return nil
	}
	return func(d time.Duration) { r.opts.Progress(name, d, r.sc.Duration) }
}

// finish writes the trace's sections out, stores each run simulated to
// the end in the cache, hands the histograms to Options.HDR, and marks
// the strategies that did not finish, and the results, Partial.
func (r *virtualRun) finish() error {
	if r.secs != nil {
		if err := finishSections(r.opts.Trace, r.secs); err != nil {
			return err
		}
	}
	for i, e := range r.engines {
		if e != nil && (r.cache != nil || r.opts.HDR != nil) {
			r.cached[i] = e.hdrLatencies()
		}
		if e != nil && r.cache != nil && r.complete[i] {
			r.cache.store(r.key(i), r.res.Strategies[i], r.cached[i])
		}
	}
	if r.opts.HDR != nil {
		for _, l := range r.cached {
			r.opts.HDR(l)
		}
	}
	for i, ok := range r.complete {
		if !ok {
			r.res.Partial = true
			if r.res.Strategies[i].Name == "" {
				r.res.Strategies[i] = r.engines[i].result()
			}
			r.res.Strategies[i].Partial = true
		}
	}
	return nil
}

// newResults returns the results of a virtual run of sc (opts applied)
// before its strategies are simulated.
func newResults(sc *scenarios.Scenario, opts *Options) *results.Results {
	return &results.Results{
		Scenario: sc.Name, Description: sc.Description, Seed: sc.Seed, SimbenchVersion: opts.VersionOrDefault(),
		ScenarioDigest: ScenarioDigest(sc), DurationS: sc.Duration.Seconds(), Mode: "virtual", Limits: setup.LimitsOf(sc),
		Events:     setup.EventSpans(sc),
		Strategies: make([]results.StrategyResult, len(sc.Strategies)),
	}
}
