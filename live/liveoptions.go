package live

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched/quota"
)

// The time scales a live run accepts (LiveOptions.TimeScale). Below
// MinTimeScale a nanosecond timer is coarser than the scenario's own
// timing; above MaxTimeScale the fake services would have to play slower
// than life, which they do not (fakeapi.ServerConfig.TimeScale).
const (
	MinTimeScale = 1e-6
	MaxTimeScale = 1.0
	// minScaledRun is the shortest real duration a scaled run may last.
	minScaledRun = time.Millisecond
)

// ErrBadLiveOption is wrapped by the errors of LiveOptions.Validate: a
// setting no live run can take (invalid input, not a failed run).
var ErrBadLiveOption = errors.New("live option out of range")

// Validate checks the options against sc before anything runs: a time
// scale that is finite, within [MinTimeScale, MaxTimeScale] and leaves
// the scaled run at least a millisecond long; at
// most scenarios.MaxProcesses processes; shares that match the processes
// in number and are finite and ≥ 0; a Redis URL, when given, with the
// redis:// scheme. Every error wraps ErrBadLiveOption. RunLive validates
// too; a caller validates first to refuse a flag before it starts anything.
func (o LiveOptions) Validate(sc *scenarios.Scenario) error {
	bad := func(format string, a ...any) error {
		return badOption{fmt.Errorf("live: "+format, a...)}
	}
	if f := o.TimeScale; f != 0 {
		run := sc.Duration.Seconds() * f
		if o.Duration > 0 {
			run = o.Duration.Seconds() * f
		}
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0) || f < MinTimeScale || f > MaxTimeScale:
			return bad("time scale %g: want a number from %g to %g; the fake services play faster than life, not slower (0.01 plays 10 minutes in 6 seconds)", f, MinTimeScale, MaxTimeScale)
		case run < minScaledRun.Seconds():
			return bad("time scale %g plays the scenario's %v in %v: want at least %v; use a larger time scale", f, sc.Duration, time.Duration(run*1e9), minScaledRun)
		}
	}
	if o.Processes > scenarios.MaxProcesses {
		return bad("%d processes: at most %d (the limit of workload.processes)", o.Processes, scenarios.MaxProcesses)
	}
	fo, err := o.fleetFor(sc)
	if err != nil {
		return badOption{err}
	}
	if fo.n > 1 {
		f := o.TimeScale
		if f <= 0 {
			f = 1
		}
		for i := range sc.Strategies {
			if st := &sc.Strategies[i]; st.TokenBucket && fo.forStrategy(st).mode == QuotaSplit {
				if msg := scenarios.SplitBelowFloor(sc, fo.n, f); msg != "" {
					return bad("strategy %q: %s", st.Name, msg)
				}
			}
		}
	}
	if o.Redis != "" {
		if _, err := quota.ParseURL(o.Redis); err != nil {
			return badOption{err}
		}
	}
	for i := range sc.Strategies {
		st := &sc.Strategies[i]
		if st.Quota.OutageFor > 0 && (len(o.Strategies) == 0 || slices.Contains(o.Strategies, st.Name)) {
			return bad("strategy %q: quota.outage_at simulates its store's outage in virtual time only; a live run's Redis is real (stop it during the run to see the failover), so remove outage_at and outage_for, or leave the strategy out (--strategy)", st.Name)
		}
	}
	return nil
}

// badOption is an error of Validate: errors.Is(err, ErrBadLiveOption).
type badOption struct{ error }

// Unwrap returns the error that says what is wrong with the option.
func (e badOption) Unwrap() error { return e.error }

// Is reports whether target is ErrBadLiveOption, which every bad option is.
func (e badOption) Is(target error) bool { return target == ErrBadLiveOption }
