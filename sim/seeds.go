package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"time"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/simbench/simbench/scenarios"
)

// Seeds returns the n seeds a run with Options.Seeds = n uses: the base
// seed and the n−1 that follow it (base, base+1, …). At least one.
func Seeds(base uint64, n int) []uint64 {
	out := []uint64{base}
	for i := 1; i < n; i++ {
		out = append(out, base+uint64(i))
	}
	return out
}

// RunSeeds runs the scenario once per seed of Seeds(seed, opts.Seeds), each
// run as Run does, and returns the first seed's results with
// Results.Seeds listing the seeds and every strategy's SeedRuns holding
// each seed's figures in that order (its plot series left out). With one
// seed it is Run. Progress reports each strategy's time over all the seeds
// as a share of one run's duration. When ctx ends first, RunSeeds returns
// what the completed seeds measured with Partial set, and ctx.Err().
func RunSeeds(ctx context.Context, sc *scenarios.Scenario, opts Options) (*Results, error) {
	if opts.Seeds <= 1 {
		return Run(ctx, sc, opts)
	}
	applied, err := opts.Apply(sc)
	if err != nil {
		return nil, err
	}
	seeds := Seeds(applied.Seed, opts.Seeds)
	var first *Results
	for i, seed := range seeds {
		o := opts
		o.Seed = &seed
		if opts.Progress != nil {
			n := time.Duration(len(seeds))
			o.Progress = func(strategy string, done, total time.Duration) {
				opts.Progress(strategy, (time.Duration(i)*total+done)/n, total)
			}
		}
		r, err := Run(ctx, sc, o)
		if r == nil {
			return first, err
		}
		if first == nil {
			first = r
			first.Seeds = []uint64{}
		}
		if r.Partial && i > 0 {
			first.Partial = true
			return first, err
		}
		first.Seeds = append(first.Seeds, seed)
		for j := range first.Strategies {
			s := r.Strategies[j]
			s.LatencyCDF, s.AnswerCDF, s.Timeline, s.LimitTrace, s.SeedRuns = nil, nil, nil, nil, nil
			first.Strategies[j].SeedRuns = append(first.Strategies[j].SeedRuns, s)
		}
		if err != nil {
			return first, err
		}
	}
	return first, nil
}

// Interval is a mean over seeds with its 95% confidence interval (Student's
// t, n−1 degrees of freedom), in the unit of the figure it summarises. A
// figure that is +Inf for some seed (a p95 turn never answered) has a +Inf
// mean and bounds: the mean of such a figure is not a number anyone can use.
type Interval struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	// N is the number of seeds.
	N int `json:"n"`
}

// IntervalOf returns the mean of xs with its 95% interval; with fewer than
// two values the interval is the value itself.
func IntervalOf(xs []float64) Interval {
	iv := Interval{N: len(xs)}
	if len(xs) == 0 {
		return iv
	}
	for _, x := range xs {
		if math.IsInf(x, 1) {
			inf := math.Inf(1)
			return Interval{Mean: inf, Lo: inf, Hi: inf, N: len(xs)}
		}
	}
	mean, sd := stat.MeanStdDev(xs, nil)
	iv.Mean, iv.Lo, iv.Hi = mean, mean, mean
	if len(xs) < 2 {
		return iv
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(0.975)
	half := t * sd / math.Sqrt(float64(len(xs)))
	iv.Lo, iv.Hi = mean-half, mean+half
	return iv
}

// HalfWidth is half the interval's width: the "±" of "3,449 ±21".
func (iv Interval) HalfWidth() float64 { return (iv.Hi - iv.Lo) / 2 }

// MarshalJSON writes infinite bounds as null.
func (iv Interval) MarshalJSON() ([]byte, error) {
	type out struct {
		Mean AnswerMs `json:"mean"`
		Lo   AnswerMs `json:"lo"`
		Hi   AnswerMs `json:"hi"`
		N    int      `json:"n"`
	}
	return json.Marshal(out{AnswerMs(iv.Mean), AnswerMs(iv.Lo), AnswerMs(iv.Hi), iv.N})
}

// ScenarioDigest returns the SHA-256, in hex, of the scenario's workload,
// services and tools: what a run measures under, leaving out the seed, the
// duration and the strategies, which runs vary on purpose.
func ScenarioDigest(sc *scenarios.Scenario) string {
	w := sc.Workload
	if w.Processes <= 1 {
		// One process, as before the keys existed: the same digest.
		w.Processes, w.ProcessShares = 0, nil
	}
	v := any(struct {
		W scenarios.Workload
		S []scenarios.Service
		T []scenarios.Tool
	}{w, sc.Services, sc.Tools})
	if len(sc.Events) > 0 {
		// Events are conditions too; a scenario without any keeps the
		// digest it had before events existed.
		v = struct {
			W scenarios.Workload
			S []scenarios.Service
			T []scenarios.Tool
			E []scenarios.Event
		}{w, sc.Services, sc.Tools, sc.Events}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
