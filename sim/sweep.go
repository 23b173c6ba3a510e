package sim

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// Load changes the workload's size for one row of a sweep: the closed
// model's sessions or the open model's arrival rate (turns per second).
type Load struct {
	// Sessions is the closed model's number of sessions (0: unchanged).
	Sessions int
	// ArrivalRate is the open model's arrival rate, in turns per second
	// (0: unchanged).
	ArrivalRate float64
}

// String names the load as the --by flag writes it.
func (l Load) String() string {
	if l.Sessions > 0 {
		return "sessions=" + strconv.Itoa(l.Sessions)
	}
	if l.ArrivalRate > 0 {
		return "arrival_rate=" + strconv.FormatFloat(l.ArrivalRate, 'g', -1, 64) + "/s"
	}
	return "as written"
}

// ParseLoads reads a --by value: "sessions=10,20,40" or
// "arrival_rate=1,2,5" (turns per second).
func ParseLoads(s string) ([]Load, error) {
	key, list, ok := strings.Cut(s, "=")
	if !ok || list == "" {
		return nil, fmt.Errorf("--by %q: want sessions=N,N,… or arrival_rate=R,R,…", s)
	}
	var loads []Load
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSuffix(strings.TrimSpace(v), "/s")
		switch key {
		case "sessions":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > scenarios.MaxSessions {
				return nil, fmt.Errorf("--by sessions: %q is not a whole number from 1 to %d", v, scenarios.MaxSessions)
			}
			loads = append(loads, Load{Sessions: n})
		case "arrival_rate":
			r, err := strconv.ParseFloat(v, 64)
			if err != nil || !(r > 0 && r <= scenarios.MaxArrivalRate) { // NaN fails both
				return nil, fmt.Errorf("--by arrival_rate: %q is not a rate above 0 and at most %d (turns per second)", v, scenarios.MaxArrivalRate)
			}
			loads = append(loads, Load{ArrivalRate: r})
		default:
			return nil, fmt.Errorf("--by %q: the load is sessions or arrival_rate", key)
		}
	}
	return loads, nil
}

// ParseCaps reads a --cap value: "1..64" (doubling: 1, 2, 4, …, 64, with
// the end always included), "4..32/4" (a step of 4) or a list "1,4,8".
func ParseCaps(s string) ([]int, error) {
	bad := fmt.Errorf("--cap %q: want A..B, A..B/STEP or a list A,B,C of caps ≥ 1", s)
	if lo, hi, ok := strings.Cut(s, ".."); ok {
		step := 0
		if h, st, ok := strings.Cut(hi, "/"); ok {
			hi = h
			n, err := strconv.Atoi(st)
			if err != nil || n < 1 {
				return nil, bad
			}
			step = n
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || a < 1 || b < a {
			return nil, bad
		}
		var caps []int
		for c := a; c <= b; {
			caps = append(caps, c)
			if step > 0 {
				c += step
			} else {
				c *= 2
			}
		}
		if caps[len(caps)-1] != b {
			caps = append(caps, b)
		}
		return caps, nil
	}
	var caps []int
	for _, v := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return nil, bad
		}
		caps = append(caps, n)
	}
	return caps, nil
}

// SweepRow is one load of a sweep: the strategy's results at every cap.
type SweepRow struct {
	// Load is the row's workload size (zero: the workload as written).
	Load    Load
	Caps    []int                    // the caps measured, in the order given
	Results []results.StrategyResult // one per cap of Caps
}

// Sweep runs one strategy of the scenario at every cap, under each load
// (nil: the workload as written), in parallel on the available cores. The
// cap varied is the one SweepService names: the strategy's global
// MaxInFlight, or its one per-service cap. The runs are the deterministic
// virtual-time runs of RunSeeds, over opts.Seeds seeds. When ctx ends
// first, Sweep returns the rows measured and ctx.Err(): the last row holds
// only the caps at least one of whose seeds finished (SeedRuns lists
// those), and no row is returned for a load none of whose caps did.
func Sweep(ctx context.Context, sc *scenarios.Scenario, strategy string, caps []int, loads []Load, opts Options) ([]SweepRow, error) {
	st := sc.Strategy(strategy)
	if st == nil {
		return SweepCap(ctx, sc, strategy, "", caps, loads, opts)
	}
	return SweepCap(ctx, sc, strategy, SweepService(st), caps, loads, opts)
}

// SweepCap is Sweep with the cap varied named: service's per-service cap,
// or the global MaxInFlight when service is "".
func SweepCap(ctx context.Context, sc *scenarios.Scenario, strategy, service string, caps []int, loads []Load, opts Options) ([]SweepRow, error) {
	base := sc.Strategy(strategy)
	if base == nil {
		var names []string
		for _, st := range sc.Strategies {
			names = append(names, st.Name)
		}
		return nil, fmt.Errorf("scenario %q has no strategy %s (it has %s)", sc.Name, strategy, strings.Join(names, ", "))
	}
	if len(loads) == 0 {
		loads = []Load{{}}
	}
	var rows []SweepRow
	for _, load := range loads {
		c := *sc
		switch {
		case load.Sessions > 0:
			c.Workload.Sessions, c.Workload.ArrivalRate = load.Sessions, 0
		case load.ArrivalRate > 0:
			if c.Workload.Arrival == "" {
				c.Workload.Arrival = scenarios.ArrivalPoisson
			}
			c.Workload.Sessions, c.Workload.ArrivalRate = 0, load.ArrivalRate
		}
		c.Strategies = nil
		svc := service
		for _, cp := range caps {
			st := *base
			st.Name = fmt.Sprintf("%s@%d", base.Name, cp)
			if svc == "" {
				st.MaxInFlight = cp
			} else {
				st.MaxInFlightPerService = maps.Clone(base.MaxInFlightPerService)
				st.MaxInFlightPerService[svc] = cp
			}
			c.Strategies = append(c.Strategies, st)
		}
		o := opts
		o.Strategies = nil
		res, err := RunSeeds(ctx, &c, o)
		if err != nil {
			if res != nil && ctx.Err() != nil {
				if row := finishedRuns(load, caps, res.Strategies, opts.Seeds); len(row.Caps) > 0 {
					rows = append(rows, row)
				}
			}
			return rows, err
		}
		rows = append(rows, SweepRow{Load: load, Caps: caps, Results: res.Strategies})
	}
	return rows, nil
}

// finishedRuns is the row of an interrupted RunSeeds: each cap's seeds that
// ran to the end, the caps without one left out.
func finishedRuns(load Load, caps []int, strategies []results.StrategyResult, seeds int) SweepRow {
	row := SweepRow{Load: load}
	for i, s := range strategies {
		if seeds <= 1 {
			if !s.Partial {
				row.Caps, row.Results = append(row.Caps, caps[i]), append(row.Results, s)
			}
			continue
		}
		runs := slices.DeleteFunc(slices.Clone(s.SeedRuns), func(r results.StrategyResult) bool { return r.Partial })
		if len(runs) == 0 {
			continue
		}
		// The strategy's own figures are its first seed's, finished here.
		s.SeedRuns, s.Partial = runs, false
		row.Caps, row.Results = append(row.Caps, caps[i]), append(row.Results, s)
	}
	return row
}

// SweepStrategy is the strategy a sweep or a recommendation varies when the
// user names none: the one the scenario marks (recommend = true), else its
// first with a cap above 1 (global or per service), else its first.
func SweepStrategy(sc *scenarios.Scenario) string {
	for _, st := range sc.Strategies {
		if st.Recommend {
			return st.Name
		}
	}
	for _, st := range sc.Strategies {
		if st.MaxInFlight > 1 || slices.ContainsFunc(slices.Collect(maps.Values(st.MaxInFlightPerService)), func(n int) bool { return n > 1 }) {
			return st.Name
		}
	}
	return sc.Strategies[0].Name
}

// SweepService names the service whose cap a sweep of st varies: its one
// per-service cap when it has exactly one and no global cap above 1; ""
// (the global cap, MaxInFlight) otherwise.
func SweepService(st *scenarios.Strategy) string {
	if st.MaxInFlight > 1 || len(st.MaxInFlightPerService) != 1 {
		return ""
	}
	for name := range st.MaxInFlightPerService {
		return name
	}
	return ""
}
