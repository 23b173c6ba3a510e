package sim

import (
	"context"
	"time"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
)

// demandTurns is the turns, by the workload arithmetic (Estimate), that
// Demand's window is long enough to hold: the mean turn time it measures
// over them sets the rate it carries on to the end of the run.
const demandTurns = 2_000

// demandSlowTurns is the turns with a slow first byte (a service's
// faults.slow_first_byte, kept by unlimited) that Demand's window is long
// enough to expect: a rare tail of seconds sets much of the mean turn time,
// and a window of demandTurns holding a few dozen of them misses the whole
// run's mean by several percent (hedging's 1% of 9.8 s answers: 3.5%).
const demandSlowTurns = 100

// minDemandWindow is the shortest window Demand estimates from.
const minDemandWindow = time.Minute

// Demand measures the turns per second the scenario's workload offers when
// nothing holds it back: every service without rate or concurrency limits
// and without faults, and every turn's calls issued at once. It is the
// turns begun over the run (those still running at its end too) divided by
// its duration, both from opts and sc as Run takes them. An open workload
// offers its arrival rate; a closed one offers as many turns as its
// sessions begin between thinks.
//
// A closed workload is simulated over a window of the run only, when the
// run is at least twice as long (demandWindow): the turns begun in the
// window, plus, to the end of the run, the closed form's rate, sessions ÷
// (mean think + mean turn time), with the turn time measured in the
// window. Nothing holds a turn back, so its time has no warm-up; the
// window's own count carries the sessions' start. A finite workload offers
// no more than its sessions × turns. TestLongDemandWindowOnBuiltins holds this
// within 2% of simulating the whole run on every built-in scenario.
//
// Compare it with what a limit sustains: a workload offering more will
// queue or fail turns under any concurrency cap.
func Demand(ctx context.Context, sc *scenarios.Scenario, opts Options) (turnsPerS float64, err error) {
	if sc.Workload.Sessions == 0 {
		return sc.Workload.ArrivalRate, nil
	}
	c := unlimited(sc)
	o := opts
	o.Strategies, o.Progress = nil, nil // the caller's progress bars know no such strategy
	applied, err := o.Apply(c)
	if err != nil {
		return 0, err
	}
	return demand(ctx, c, o, demandWindow(applied))
}

// demand measures the demand of c, unlimited, run with o, from the first
// window of the run (all of it: the run's own figure), as Demand does.
func demand(ctx context.Context, c *scenarios.Scenario, o Options, window time.Duration) (float64, error) {
	applied, err := o.Apply(c)
	if err != nil {
		return 0, err
	}
	run := applied.Duration
	if window >= run {
		n, durS, _, err := turnsBegun(ctx, c, o, run)
		if err != nil {
			return 0, err
		}
		return setup.Round6(n / durS), nil
	}
	n, _, turnS, err := turnsBegun(ctx, c, o, window)
	if err != nil {
		return 0, err
	}
	w := &applied.Workload
	rate := float64(w.Sessions) / (meanOf(w.Think)/1e9 + turnS)
	total := n + rate*(run-window).Seconds()
	if w.Turns > 0 {
		total = min(total, float64(w.Sessions)*float64(w.Turns))
	}
	return setup.Round6(total / run.Seconds()), nil
}

// unlimited returns a copy of sc whose services have no rate or concurrency
// limits and no faults but slow first bytes (a latency, not a failure), with
// one strategy that sets no limits either.
func unlimited(sc *scenarios.Scenario) *scenarios.Scenario {
	c := *sc
	c.Services = make([]scenarios.Service, len(sc.Services))
	for i, svc := range sc.Services {
		svc.RequestsPerSecond, svc.RequestsPerMinute, svc.TokensPerMinute, svc.MaxConcurrent, svc.Burst = 0, 0, 0, 0, 0
		svc.Faults = spec.Faults{SlowFirstByte: svc.Faults.SlowFirstByte}
		c.Services[i] = svc
	}
	c.Strategies = []scenarios.Strategy{{Name: "no limits"}}
	return &c
}

// demandWindow returns how much of sc's run Demand simulates: a window long
// enough for the workload arithmetic (Estimate) to expect demandTurns turns
// in it (and demandSlowTurns slow first bytes, counting one a call's rate
// per turn, which errs long), at least minDemandWindow and the sessions' ramp, in whole seconds;
// or the whole run when the window would be more than half of it, or when
// timed events change the services' conditions (a turn's time in the window
// would not be its time later).
func demandWindow(sc *scenarios.Scenario) time.Duration {
	run := sc.Duration
	if len(sc.Events) > 0 {
		return run
	}
	est := estimate(sc, 1)
	if !(est.Turns > 0) { // NaN too
		return run
	}
	turns := float64(demandTurns)
	for _, svc := range sc.Services {
		if r := svc.Faults.SlowFirstByte.Rate; r > 0 {
			turns = max(turns, demandSlowTurns/r)
		}
	}
	w := max(time.Duration(float64(run)*turns/est.Turns), minDemandWindow, sc.Workload.Ramp)
	w = (w + time.Second - 1).Truncate(time.Second)
	if 2*w > run {
		return run
	}
	return w
}

// turnsBegun simulates c, with opts, for d and returns the turns its one
// strategy began, those finished and those still running at the end, the
// seconds the run lasted and the mean seconds of a finished turn.
func turnsBegun(ctx context.Context, c *scenarios.Scenario, opts Options, d time.Duration) (turns, durS, turnS float64, err error) {
	opts.Duration = d
	res, err := Run(ctx, c, opts)
	if err != nil {
		return 0, 0, 0, err
	}
	st := res.Strategies[0]
	return float64(st.Turns + st.UnfinishedTurns), res.DurationS, st.TurnLatencyMs.Mean / 1e3, nil
}
