package collect

import (
	"fmt"
	"io"
	"regexp"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HDRSignificantDigits is the precision of the HdrHistograms a run's
// latencies are recorded in (sim's histogram, in nanoseconds) and exported
// as (in microseconds): 3 significant digits, so a value read back is less
// than 0.1% above the one recorded.
const HDRSignificantDigits = 3

// HDRLatencies is one strategy's latency distributions from one run (one
// seed), as HdrHistograms whose values are in microseconds: Turn holds
// every finished turn's latency (its count is StrategyResult.Turns), Call
// every tool call's (its count is StrategyResult.Calls). Each is stamped
// with the run's virtual interval, from 0 to the scenario's duration, in
// milliseconds (StartTimeMs, EndTimeMs).
type HDRLatencies struct {
	// Strategy is the name of the scenario strategy measured.
	Strategy string
	// Seed is the random seed of the run the histograms come from.
	Seed uint64
	// Turn and Call are the finished turns' and the tool calls' latencies,
	// in microseconds.
	Turn, Call *hdrhistogram.Histogram
}

// Hdr converts the histogram into an HdrHistogram of microseconds covering
// 1 µs to 2^40 µs: each bucket's count is recorded at the value the
// histogram reports for it (the top of the bucket, kept within the
// observed min and max), so the HdrHistogram's quantiles agree with
// summary's within a microsecond and its 0.1% precision. end stamps the
// interval's end, in milliseconds.
func (h *Histogram) Hdr(end time.Duration) *hdrhistogram.Histogram {
	out := hdrhistogram.New(1, int64(HistMax/time.Microsecond), HDRSignificantDigits)
	for _, bar := range h.Full().Distribution() {
		if bar.Count == 0 {
			continue
		}
		// The value range covers every bucket, so RecordValues cannot fail.
		_ = out.RecordValues(h.clamp(time.Duration(bar.To)).Microseconds(), bar.Count)
	}
	out.SetStartTimeMs(0)
	out.SetEndTimeMs(end.Milliseconds())
	return out
}

// BadTag matches what an interval log's tag may not hold.
var BadTag = regexp.MustCompile(`[^A-Za-z0-9_.:+-]`)

// WriteHDRLog writes an HdrHistogram interval log (format 1.3, which
// HdrHistogram's log processors and plotters read) to w: a header of
// comments saying what the values are (latency in microseconds) and
// whence, then one interval per histogram, in order, each tagged with tag
// (characters an interval tag may not hold become '_'). A histogram's
// interval is its StartTimeMs to EndTimeMs; the i-th is shifted by the
// sum of the earlier ones' lengths, so several runs (seeds) follow one
// another. The Interval_Max column is the maximum divided by 10^6 (in
// seconds, the values being microseconds).
func WriteHDRLog(w io.Writer, what, tag string, hs []*hdrhistogram.Histogram) error {
	tags := make([]string, len(hs))
	for i := range tags {
		tags[i] = tag
	}
	return WriteHDRLogTagged(w, what, "[Values are latencies in microseconds (1 µs … 2^40 µs, 3 significant digits); Interval_Max is in seconds; times are virtual, from the run's start]", tags, hs)
}

// WriteHDRLogTagged is WriteHDRLog with the comment saying what the values are
// and a tag per histogram.
func WriteHDRLogTagged(w io.Writer, what, units string, tags []string, hs []*hdrhistogram.Histogram) error {
	lw := hdrhistogram.NewHistogramLogWriter(w)
	lines := []func() error{
		lw.OutputLogFormatVersion,
		func() error { return lw.OutputComment("[simbench " + what + "]") },
		func() error { return lw.OutputComment(units) },
		func() error { return lw.OutputStartTime(0) },
		func() error { return lw.OutputBaseTime(0) },
		lw.OutputLegend,
	}
	for _, f := range lines {
		if err := f(); err != nil {
			return err
		}
	}
	var offset int64
	for i, h := range hs {
		tag := BadTag.ReplaceAllString(tags[i], "_")
		c := hdrhistogram.Import(h.Export())
		length := h.EndTimeMs() - h.StartTimeMs()
		c.SetStartTimeMs(offset)
		c.SetEndTimeMs(offset + length)
		c.SetTag(tag)
		offset += length
		if err := lw.OutputIntervalHistogram(c); err != nil {
			return fmt.Errorf("writing an interval: %w", err)
		}
	}
	return nil
}
