package sim

import (
	"github.com/simbench/simbench/results"
	"math"
	"time"
)

// histogram is a streaming histogram of durations with log-linear buckets:
// 128 sub-buckets per power of two of microseconds, so any quantile is
// within 0.8% of the true value, in fixed memory (a few thousand counters)
// however many samples it holds. Mean, min and max are exact, and every
// quantile lies between min and max: a bucket's midpoint is clamped to
// what was observed.
type histogram struct {
	counts   []uint64
	n        uint64
	sum      float64 // seconds
	min, max time.Duration
}

const (
	histSubBits = 7  // 2^7 sub-buckets per octave
	histOctaves = 40 // 1 µs … 2^40 µs (12 days)
	histBuckets = histOctaves << histSubBits
)

func newHistogram() *histogram { return &histogram{counts: make([]uint64, histBuckets+1)} }

// bucketOf maps a duration to its bucket: the exponent and the top mantissa
// bits of its value in microseconds.
func bucketOf(d time.Duration) int {
	us := float64(d) / 1e3
	if us < 1 {
		return 0
	}
	bits := math.Float64bits(us)
	exp := int(bits>>52) - 1023
	mant := int(bits>>(52-histSubBits)) & (1<<histSubBits - 1)
	i := exp<<histSubBits | mant
	return min(i+1, histBuckets)
}

// bucketValue is the midpoint of bucket i, as a duration.
func bucketValue(i int) time.Duration {
	if i == 0 {
		return 0
	}
	i--
	exp, mant := i>>histSubBits, i&(1<<histSubBits-1)
	lo := math.Ldexp(1+float64(mant)/(1<<histSubBits), exp)
	hi := math.Ldexp(1+float64(mant+1)/(1<<histSubBits), exp)
	return time.Duration((lo + hi) / 2 * 1e3)
}

func (h *histogram) add(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(d)]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	h.n++
	h.sum += d.Seconds()
	h.max = max(h.max, d)
}

// quantile returns the q-quantile (0 ≤ q ≤ 1), never above the exact max.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.ranked(max(uint64(math.Ceil(q*float64(h.n))), 1))
}

// ranked returns the rank-th smallest value (1 ≤ rank ≤ h.n), never
// outside the exact min and max.
func (h *histogram) ranked(rank uint64) time.Duration {
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return h.clamp(bucketValue(i))
		}
	}
	return h.max
}

// clamp keeps a bucket's value within what was observed.
func (h *histogram) clamp(d time.Duration) time.Duration { return min(max(d, h.min), h.max) }

// quantileAmong returns the q-quantile (0 ≤ q ≤ 1) of a population of total
// values of which the histogram holds the smallest h.n, the rest being
// larger than any it holds; ok is false when the quantile falls among
// those others.
func (h *histogram) quantileAmong(q float64, total uint64) (d time.Duration, ok bool) {
	rank := max(uint64(math.Ceil(q*float64(total))), 1)
	if total == 0 || rank > h.n {
		return 0, false
	}
	return h.ranked(rank), true
}

func (h *histogram) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n) * 1e9)
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// answerSummary summarises the time to answer of total turns begun, of
// which the histogram holds the answered ones.
func (h *histogram) answerSummary(total uint64) results.AnswerSummary {
	at := func(q float64) results.AnswerMs {
		if d, ok := h.quantileAmong(q, total); ok {
			return results.AnswerMs(ms(d))
		}
		return results.Unanswered
	}
	s := results.AnswerSummary{Mean: ms(h.mean()), P50: at(0.5), P95: at(0.95), P99: at(0.99)}
	if total > 0 {
		s.AnsweredShare = round6(float64(h.n) / float64(total))
	}
	return s
}

// summary returns the histogram's summary in milliseconds (microsecond precision).
func (h *histogram) summary() results.Summary {
	return results.Summary{
		Mean: ms(h.mean()), P50: ms(h.quantile(0.5)), P95: ms(h.quantile(0.95)),
		P99: ms(h.quantile(0.99)), Max: ms(h.max),
	}
}

// cdf samples the distribution at up to n points for plots.
func (h *histogram) cdf(n int) []results.CDFPoint { return h.cdfAmong(n, h.n) }

// cdfAmong samples, at up to n points, the distribution of a population of
// total values of which the histogram holds the smallest h.n, the rest
// never arriving: its P ends at h.n ÷ total.
func (h *histogram) cdfAmong(n int, total uint64) []results.CDFPoint {
	if h.n == 0 || total < h.n {
		return nil
	}
	var out []results.CDFPoint
	var seen uint64
	step := max(h.n/uint64(n), 1)
	next := step
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		seen += c
		if seen >= next || seen == h.n {
			out = append(out, results.CDFPoint{Ms: ms(h.clamp(bucketValue(i))), P: math.Round(float64(seen)/float64(total)*1e6) / 1e6})
			for next <= seen {
				next += step
			}
		}
	}
	return out
}
