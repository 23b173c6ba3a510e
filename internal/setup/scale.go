package setup

import (
	"time"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
)

// Scale returns a copy of sc in which every duration is multiplied by f and
// every rate divided by f (bucket capacities keep their size; see
// liveBuckets for the token buckets, which the schema does not size), so that a live run at f = 0.01 plays a
// 10-minute scenario in 6 seconds with the same shape: the same requests per
// latency, the same bursts, the same limits relative to the load.
func Scale(sc *scenarios.Scenario, f float64) *scenarios.Scenario {
	c := *sc
	c.Duration = ScaleD(sc.Duration, f)
	w := &c.Workload
	w.Think = scaleDist(w.Think, f)
	w.Ramp = ScaleD(w.Ramp, f)
	w.ArrivalRate /= f
	w.Cancel.After = scaleDist(w.Cancel.After, f)
	w.Cancel.ParentTimeout = ScaleD(w.Cancel.ParentTimeout, f)
	c.Services = append([]scenarios.Service(nil), sc.Services...)
	for i := range c.Services {
		s := &c.Services[i]
		// A burst is a number of requests, not a rate: it keeps its size.
		if s.Burst == 0 && s.RequestsPerMinuteLimit() > 0 {
			s.Burst = s.RequestBurst()
		}
		s.RequestsPerSecond /= f
		s.RequestsPerMinute /= f
		s.TokensPerMinute /= f
		s.Latency = scaleDist(s.Latency, f)
		s.NetworkDelay = scaleDist(s.NetworkDelay, f)
		s.Faults.SlowFirstByte.Delay = ScaleD(s.Faults.SlowFirstByte.Delay, f)
		s.Faults.Overload.Every = ScaleD(s.Faults.Overload.Every, f)
		s.Faults.Overload.Length = ScaleD(s.Faults.Overload.Length, f)
	}
	c.Events = append([]scenarios.Event(nil), sc.Events...)
	for i := range c.Events {
		e := &c.Events[i]
		e.At, e.For = ScaleD(e.At, f), ScaleD(e.For, f)
		e.RequestsPerSecond /= f
		e.RequestsPerMinute /= f
		e.TokensPerMinute /= f
	}
	c.Strategies = append([]scenarios.Strategy(nil), sc.Strategies...)
	for i := range c.Strategies {
		st := &c.Strategies[i]
		r := &st.Retry
		r.Base, r.Cap, r.Budget = ScaleD(r.Base, f), ScaleD(r.Cap, f), ScaleD(r.Budget, f)
		r.RetryAfterJitter, r.MaxRetryAfter = ScaleD(r.RetryAfterJitter, f), ScaleD(r.MaxRetryAfter, f)
		st.AttemptTimeout, st.CallTimeout, st.TurnTimeout = ScaleD(st.AttemptTimeout, f), ScaleD(st.CallTimeout, f), ScaleD(st.TurnTimeout, f)
	}
	return &c
}

// ScaleD returns d at time scale f (d × f).
func ScaleD(d time.Duration, f float64) time.Duration { return time.Duration(float64(d) * f) }

func scaleDist(d spec.Dist[time.Duration], f float64) spec.Dist[time.Duration] {
	d.Value, d.Min, d.Max = ScaleD(d.Value, f), ScaleD(d.Min, f), ScaleD(d.Max, f)
	d.Mean, d.Stddev = ScaleD(d.Mean, f), ScaleD(d.Stddev, f)
	d.P50, d.P95 = ScaleD(d.P50, f), ScaleD(d.P95, f)
	if d.Samples != nil {
		s := make([]time.Duration, len(d.Samples))
		for i, v := range d.Samples {
			s[i] = ScaleD(v, f)
		}
		d.Samples = s
	}
	return d
}
