package results

import (
	"encoding/json"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is a mean over seeds with its 95% confidence interval (Student's
// t, n−1 degrees of freedom: mean ± t(0.975, n−1)·s/√n, s the sample
// standard deviation), in the unit of the figure it summarises. The
// interval has no width only when every seed gave the same value. A
// figure that is +Inf for some seed (a p95 turn never answered) has a +Inf
// mean and bounds: the mean of such a figure is not a number anyone can use.
type Interval struct {
	// Mean ("mean") is the mean over the seeds; Lo ("lo") and Hi ("hi")
	// the 95% interval's bounds, Lo ≤ Mean ≤ Hi.
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	// N is the number of seeds.
	N int `json:"n"`
}

// IntervalOf returns the mean of xs with its 95% interval; with one value,
// or values all equal, the interval is the value itself.
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
	if slices.Min(xs) == slices.Max(xs) {
		// Equal values: the mean is the value, exactly, and the interval
		// has no width (the only case it has none).
		iv.Mean, iv.Lo, iv.Hi = xs[0], xs[0], xs[0]
		return iv
	}
	mean, sd := stat.MeanStdDev(xs, nil)
	iv.Mean, iv.Lo, iv.Hi = mean, mean, mean
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

// UnmarshalJSON reads what MarshalJSON writes, null bounds as +Inf.
func (iv *Interval) UnmarshalJSON(b []byte) error {
	var in struct {
		Mean AnswerMs `json:"mean"`
		Lo   AnswerMs `json:"lo"`
		Hi   AnswerMs `json:"hi"`
		N    int      `json:"n"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*iv = Interval{Mean: float64(in.Mean), Lo: float64(in.Lo), Hi: float64(in.Hi), N: in.N}
	return nil
}
