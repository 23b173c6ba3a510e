package spec

import (
	"math"
	"strconv"
	"time"
)

// Unit is what a distribution draws: durations (latency, think time) or
// amounts (call counts, tokens, tokens per second).
type Unit interface{ time.Duration | float64 }

// DistKind names a distribution family.
type DistKind string

// The distribution families, as written in scenario files (key dist).
const (
	DistConstant    DistKind = "constant"
	DistUniform     DistKind = "uniform"
	DistNormal      DistKind = "normal"
	DistLognormal   DistKind = "lognormal"
	DistExponential DistKind = "exponential"
	DistPareto      DistKind = "pareto"
	DistEmpirical   DistKind = "empirical"
)

// DistKinds lists the distribution families.
var DistKinds = []DistKind{DistConstant, DistUniform, DistNormal, DistLognormal, DistExponential, DistPareto, DistEmpirical}

// Dist is a probability distribution of durations (Dist[time.Duration]) or
// of amounts such as call counts and tokens (Dist[float64]). Only the
// parameters of Kind are set. The zero value (Kind "") is unset: it draws
// the zero Value, 0, touching no random stream.
type Dist[T Unit] struct {
	// Kind is the distribution family (key dist; "": unset).
	Kind DistKind
	// Value is the constant's value.
	Value T
	// Min and Max bound a uniform distribution. Min is a Pareto's scale.
	// For normal, lognormal, exponential and Pareto, Max > 0 is an optional
	// cap on draws (0: none).
	Min, Max T
	// Mean and Stddev set a normal distribution (draws below 0 count as 0);
	// Mean alone sets an exponential one.
	Mean, Stddev T
	// P50 and P95 set a lognormal distribution by its median and 95th
	// percentile: mu = ln P50, sigma = (ln P95 − ln P50) / 1.6448536.
	P50, P95 T
	// Alpha is a Pareto's shape (> 0; smaller is a heavier tail).
	Alpha float64
	// File names the empirical distribution's file as written in the
	// scenario, relative to it; Samples are its values in file order, which
	// draws resample.
	File    string
	Samples []T
}

// Constant returns the distribution that always gives v.
func Constant[T Unit](v T) Dist[T] { return Dist[T]{Kind: DistConstant, Value: v} }

// IsSet reports whether d names a family.
func (d Dist[T]) IsSet() bool { return d.Kind != "" }

// lognormalZ95 is the standard normal's 95th percentile, which relates a
// lognormal's P95 to its P50.
const lognormalZ95 = 1.6448536

// TailOdds is how rare a draw Upper allows for on the unbounded families
// (normal, lognormal, exponential and Pareto without a cap): their largest
// value counted is the one exceeded once in 10^12 draws.
const TailOdds = 1e12

// tailZ is the standard normal quantile exceeded once in TailOdds draws.
const tailZ = 7.034

// Upper returns the largest draw of d that a validator allows for, as a
// float64 in d's unit (nanoseconds for durations): the value of a constant,
// the max of a uniform, the largest sample of an empirical distribution,
// and for the unbounded families (normal, lognormal, exponential, Pareto)
// the draw exceeded once in TailOdds draws, or Max when that is smaller. A
// consumer that clamps its draws to Upper never sees more than what was
// validated. It is 0 for the zero Dist.
func (d Dist[T]) Upper() float64 {
	var up float64
	switch d.Kind {
	case DistConstant:
		return float64(d.Value)
	case DistUniform:
		return float64(d.Max)
	case DistEmpirical:
		for _, s := range d.Samples {
			up = max(up, float64(s))
		}
		return up
	case DistNormal:
		up = float64(d.Mean) + tailZ*float64(d.Stddev)
	case DistLognormal:
		up = float64(d.P50) * math.Pow(float64(d.P95)/float64(d.P50), tailZ/lognormalZ95)
	case DistExponential:
		up = float64(d.Mean) * math.Log(TailOdds)
	case DistPareto:
		up = float64(d.Min) * math.Pow(TailOdds, 1/d.Alpha)
	default:
		return 0
	}
	if d.Max > 0 {
		up = min(up, float64(d.Max))
	}
	if math.IsNaN(up) {
		return math.Inf(1)
	}
	return max(up, 0)
}

// Float returns d with its parameters as float64 in d's unit (nanoseconds
// for durations).
func (d Dist[T]) Float() Dist[float64] {
	f := Dist[float64]{
		Kind: d.Kind, Value: float64(d.Value), Min: float64(d.Min), Max: float64(d.Max),
		Mean: float64(d.Mean), Stddev: float64(d.Stddev), P50: float64(d.P50), P95: float64(d.P95),
		Alpha: d.Alpha, File: d.File,
	}
	if d.Samples != nil {
		f.Samples = make([]float64, len(d.Samples))
		for i, s := range d.Samples {
			f.Samples[i] = float64(s)
		}
	}
	return f
}

// Show prints a value of a distribution: a duration as time.Duration
// does, an amount without a trailing .0 (whole numbers below 10^15 in
// full).
func Show[T Unit](v T) string {
	if d, ok := any(v).(time.Duration); ok {
		return d.String()
	}
	return ShowAmount(float64(v))
}

// ShowAmount prints a count or token amount without a trailing .0, and
// whole numbers below 10^15 in full.
func ShowAmount(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
