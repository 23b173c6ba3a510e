package collect

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
)

// Histogram is a streaming histogram of durations: an HdrHistogram of
// nanoseconds at HDRSignificantDigits (3) significant digits, from 1 ns
// to histMax, in fixed memory however many samples it holds. Mean, min and
// max are kept exactly beside it.
//
// Error bound: a quantile is the nearest-rank value (the ⌈q·n⌉-th
// smallest) read as the top of its HdrHistogram bucket and kept within the
// exact min and max, so it is never below the exact value and less than
// 1/1024 (0.098%) above it; values under 2,048 ns are exact. A sample
// whose values are all equal reads as that value at every quantile.
// Reports round it to the microsecond (ms).
type Histogram struct {
	// h holds the values up to the last flush; full returns it with every
	// value. Read it through full only.
	h *hdrhistogram.Histogram
	// pending counts the values added since the last flush, by h's counts
	// index (hdrIndex), up to the highest index added; unflushed is their
	// number. add counts a value here, a bounds check and an increment,
	// rather than through h.RecordValue and its checks: on M/M/20, whose
	// calls add to three histograms, some 110 fewer of the engine's 7,700
	// instructions per call (callgrind, collector off). N counts the
	// values added.
	pending   []uint32
	unflushed uint32
	N         uint64
	sum       float64 // seconds
	min, max  time.Duration
}

// The geometry of a histogram's HdrHistogram (lowest value 1, so unit
// magnitude 0): its buckets' halves hold subHalf values (2^subHalfMag),
// enough for single-unit resolution up to 2 × 10^HDRSignificantDigits.
const (
	subHalfMag = 10
	subHalf    = 1 << subHalfMag
)

// hdrIndex is the index of v (0 ≤ v ≤ histMax) in the counts of a
// histogram's HdrHistogram, computed as the HdrHistogram computes it.
func hdrIndex(v int64) int {
	bucket := bits.Len64(uint64(v)|(2*subHalf-1)) - (subHalfMag + 1)
	return (bucket+1)<<subHalfMag + int(v>>bucket) - subHalf
}

// hdrValue is the smallest value whose hdrIndex is i.
func hdrValue(i int) int64 {
	if i < 2*subHalf {
		return int64(i)
	}
	return int64(i&(subHalf-1)+subHalf) << (i>>subHalfMag - 1)
}

// Full returns the HdrHistogram holding every value added, flushing the
// pending counts into it.
func (h *Histogram) Full() *hdrhistogram.Histogram {
	if h.unflushed == 0 {
		return h.h
	}
	for i, c := range h.pending {
		if c > 0 {
			// Every index pending is within the histogram's range, and the
			// total fits an int64, so RecordValues cannot fail.
			_ = h.h.RecordValues(hdrValue(i), int64(c))
		}
	}
	clear(h.pending)
	h.unflushed = 0
	return h.h
}

// HistMax is the longest duration the histogram tells apart: 2^40 µs
// (12.7 days); longer ones are recorded as it.
const HistMax = time.Duration(1<<40) * time.Microsecond

// NewHistogram returns an empty latency histogram of durations from 1 µs
// to HistMax, at HDRSignificantDigits.
func NewHistogram() *Histogram {
	return &Histogram{h: hdrhistogram.New(1, int64(HistMax), HDRSignificantDigits)}
}

// Add records the latency d, clamped to [0, HistMax].
func (h *Histogram) Add(d time.Duration) {
	d = min(max(d, 0), HistMax)
	if h.unflushed == math.MaxUint32 {
		h.Full()
	}
	i := hdrIndex(int64(d))
	if i >= len(h.pending) {
		h.pending = append(h.pending, make([]uint32, i+1-len(h.pending))...)
	}
	h.pending[i]++
	h.unflushed++
	if h.N == 0 || d < h.min {
		h.min = d
	}
	h.N++
	h.sum += d.Seconds()
	h.max = max(h.max, d)
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) by nearest rank, never
// above the exact max.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.N == 0 {
		return 0
	}
	return h.ranked(max(uint64(math.Ceil(q*float64(h.N))), 1))
}

// ranked returns the rank-th smallest value (1 ≤ rank ≤ h.n), as the top
// of its bucket, never outside the exact min and max.
func (h *Histogram) ranked(rank uint64) time.Duration {
	// The HdrHistogram's rank of percentile p is ⌊p/100·n + 0.5⌋, which for
	// p = 100·rank/n is rank (within float rounding, which the + 0.5
	// absorbs).
	v := h.Full().ValueAtPercentile(100 * float64(rank) / float64(h.N))
	return h.clamp(time.Duration(v))
}

// clamp keeps a bucket's value within what was observed.
func (h *Histogram) clamp(d time.Duration) time.Duration { return min(max(d, h.min), h.max) }

// quantileAmong returns the q-quantile (0 ≤ q ≤ 1) of a population of total
// values of which the histogram holds the smallest h.n, the rest being
// larger than any it holds; ok is false when the quantile falls among
// those others.
func (h *Histogram) quantileAmong(q float64, total uint64) (d time.Duration, ok bool) {
	rank := max(uint64(math.Ceil(q*float64(total))), 1)
	if total == 0 || rank > h.N {
		return 0, false
	}
	return h.ranked(rank), true
}

// Mean returns the mean of the latencies recorded (0 when none).
func (h *Histogram) Mean() time.Duration {
	if h.N == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.N) * 1e9)
}

// Ms returns d in milliseconds, rounded to the microsecond.
func Ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// AnswerSummary summarises the time to answer of total turns begun, of
// which the histogram holds the answered ones.
func (h *Histogram) AnswerSummary(total uint64) results.AnswerSummary {
	at := func(q float64) results.AnswerMs {
		if d, ok := h.quantileAmong(q, total); ok {
			return results.AnswerMs(Ms(d))
		}
		return results.Unanswered
	}
	s := results.AnswerSummary{Mean: Ms(h.Mean()), P50: at(0.5), P95: at(0.95), P99: at(0.99)}
	if total > 0 {
		s.AnsweredShare = setup.Round6(float64(h.N) / float64(total))
	}
	return s
}

// Summary returns the histogram's summary in milliseconds (microsecond precision).
func (h *Histogram) Summary() results.Summary {
	return results.Summary{
		Mean: Ms(h.Mean()), P50: Ms(h.Quantile(0.5)), P95: Ms(h.Quantile(0.95)),
		P99: Ms(h.Quantile(0.99)), Max: Ms(h.max),
	}
}

// Cdf samples the distribution at up to n points for plots.
func (h *Histogram) Cdf(n int) []results.CDFPoint { return h.CdfAmong(n, h.N) }

// CdfAmong samples, at up to n points, the distribution of a population of
// total values of which the histogram holds the smallest h.n, the rest
// never arriving: its P ends at h.n ÷ total. Each point is the top of a
// bucket (within the exact min and max) with the share of values at or
// below it.
func (h *Histogram) CdfAmong(n int, total uint64) []results.CDFPoint {
	if h.N == 0 || total < h.N {
		return nil
	}
	var out []results.CDFPoint
	var seen uint64
	step := max(h.N/uint64(n), 1)
	next := step
	for _, bar := range h.Full().Distribution() {
		if bar.Count == 0 {
			continue
		}
		seen += uint64(bar.Count)
		if seen >= next || seen == h.N {
			out = append(out, results.CDFPoint{Ms: Ms(h.clamp(time.Duration(bar.To))), P: math.Round(float64(seen)/float64(total)*1e6) / 1e6})
			for next <= seen {
				next += step
			}
		}
	}
	return out
}

// Pool adds a member's histogram to h: its buckets (the same layout as
// h's), its count and, from the member's summary, its sum (mean × count)
// and maximum. A histogram whose count is not the member's n, or whose
// layout differs, is refused.
func (h *Histogram) Pool(from *hdrhistogram.Histogram, s results.Summary, n int64) error {
	if from.TotalCount() != n {
		return fmt.Errorf("a member's histogram holds %d values, its results count %d", from.TotalCount(), n)
	}
	if n == 0 {
		return nil
	}
	into := h.Full()
	if from.SignificantFigures() != into.SignificantFigures() || from.HighestTrackableValue() != into.HighestTrackableValue() {
		return fmt.Errorf("a member's histogram is of another layout (%d significant digits up to %d)", from.SignificantFigures(), from.HighestTrackableValue())
	}
	if dropped := into.Merge(from); dropped > 0 {
		return fmt.Errorf("%d of a member's values are out of range", dropped)
	}
	lo := time.Duration(from.Min())
	hi := time.Duration(math.Round(s.Max * 1e6)) // the summary's max, to the nanosecond of its microsecond
	if h.N == 0 || lo < h.min {
		h.min = lo
	}
	h.max = max(h.max, hi)
	h.N += uint64(n)
	h.sum += s.Mean / 1e3 * float64(n)
	return nil
}
