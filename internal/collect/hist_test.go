package collect

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/simbench/simbench/results"
)

func TestHistogramQuantilesWithinPrecision(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := NewHistogram()
	var all []time.Duration
	for range 100_000 {
		d := time.Duration(rng.ExpFloat64() * float64(300*time.Millisecond))
		h.Add(d)
		all = append(all, d)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	// The documented bound: never below the exact nearest-rank value, less
	// than 1/1024 above it, at every quantile.
	for k := 1; k <= 999; k++ {
		q := float64(k) / 1000
		exact := all[int(math.Ceil(q*float64(len(all))))-1]
		got := h.Quantile(q)
		if rel := float64(got-exact) / float64(exact); rel < 0 || rel >= 1.0/1024 {
			t.Errorf("q%.3f: got %v, exact %v (%+.3f%%)", q, got, exact, rel*100)
		}
	}
	if h.max != all[len(all)-1] || h.Quantile(1) != h.max {
		t.Errorf("max %v, q1 %v, want %v", h.max, h.Quantile(1), all[len(all)-1])
	}
	cdf := h.Cdf(100)
	if len(cdf) < 50 || cdf[len(cdf)-1].P != 1 {
		t.Errorf("cdf has %d points, last %+v", len(cdf), cdf[len(cdf)-1])
	}
	for i := 1; i < len(cdf); i++ {
		if cdf[i].Ms < cdf[i-1].Ms || cdf[i].P <= cdf[i-1].P {
			t.Fatalf("cdf not increasing at %d: %+v %+v", i, cdf[i-1], cdf[i])
		}
	}
}

// The time to answer counts turns with no answer as slower than any
// answered one: with 100 turns begun and 90 answered in 1..90 ms, the median
// is the 50th answered turn, and p95 and p99 fall among the unanswered.
func TestAnswerSummaryCountsUnansweredTurnsAsSlowest(t *testing.T) {
	h := NewHistogram()
	for i := 1; i <= 90; i++ {
		h.Add(time.Duration(i) * time.Millisecond)
	}
	got := h.AnswerSummary(100)
	if p50 := float64(got.P50); p50 < 50 || p50 >= 50*(1+1.0/1024) {
		t.Errorf("p50 = %v ms, want 50 ms or less than 0.1%% above", got.P50)
	}
	if got.P95.Answered() || got.P99.Answered() {
		t.Errorf("p95 = %v, p99 = %v, want both unanswered", got.P95, got.P99)
	}
	if got.AnsweredShare != 0.9 {
		t.Errorf("answered share = %v, want 0.9", got.AnsweredShare)
	}

	// Every turn answered: the same percentiles as the histogram's own.
	all := h.AnswerSummary(90)
	if float64(all.P95) != Ms(h.Quantile(0.95)) || float64(all.P99) != Ms(h.Quantile(0.99)) || all.AnsweredShare != 1 {
		t.Errorf("all answered: %+v, want p95 %v p99 %v share 1", all, Ms(h.Quantile(0.95)), Ms(h.Quantile(0.99)))
	}

	// The boundary: 95 of 100 answered keeps p95 answered, 94 does not.
	for n, want := range map[int]bool{95: true, 94: false} {
		h := NewHistogram()
		for range n {
			h.Add(time.Second)
		}
		if got := h.AnswerSummary(100).P95.Answered(); got != want {
			t.Errorf("%d of 100 answered: p95 answered = %v, want %v", n, got, want)
		}
	}

	if none := NewHistogram().AnswerSummary(0); none.P50.Answered() || none.AnsweredShare != 0 {
		t.Errorf("no turns: %+v, want unanswered and share 0", none)
	}
}

func TestAnswerMsJSON(t *testing.T) {
	in := results.AnswerSummary{Mean: 11, P50: 12.5, P95: results.Unanswered, P99: results.Unanswered, AnsweredShare: 0.9}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"mean":11,"p50":12.5,"p95":null,"p99":null,"answered_share":0.9}`; string(b) != want {
		t.Errorf("marshal = %s, want %s", b, want)
	}
	var out results.AnswerSummary
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Errorf("round trip = %+v, want %+v", out, in)
	}
	if err := json.Unmarshal([]byte(`{"p50":"soon"}`), &out); err == nil {
		t.Error("a string p50 was accepted")
	}
}

// The answer CDF levels off at the answered share: 90 answered of 100
// begun ends at P = 0.9, and with every turn answered it is the CDF.
func TestCDFAmongLevelsOffAtTheAnsweredShare(t *testing.T) {
	h := NewHistogram()
	for i := 1; i <= 90; i++ {
		h.Add(time.Duration(i) * time.Millisecond)
	}
	cdf := h.CdfAmong(100, 100)
	if last := cdf[len(cdf)-1]; last.P != 0.9 || math.Abs(last.Ms-90) > 90*0.008 {
		t.Errorf("last point %+v, want 90 ms (within the histogram's precision) at 0.9", last)
	}
	if got, want := h.CdfAmong(100, 90), h.Cdf(100); !slices.Equal(got, want) {
		t.Errorf("all answered: %v, want the CDF %v", got, want)
	}
	if got := NewHistogram().CdfAmong(100, 10); got != nil {
		t.Errorf("none answered: %v, want no points", got)
	}
}

func TestQuantilesStayWithinObserved(t *testing.T) {
	// One turn of 9,501 ms: its bucket's top is above the only value
	// observed; every percentile must be that value.
	h := NewHistogram()
	h.Add(9501 * time.Millisecond)
	s := h.Summary()
	for _, v := range []float64{s.P50, s.P95, s.P99, s.Max, s.Mean} {
		if v != 9501 {
			t.Errorf("summary %+v: want every figure 9501", s)
			break
		}
	}
	if a := h.AnswerSummary(1); a.P50 != 9501 || a.Mean != 9501 {
		t.Errorf("answer summary %+v: want p50 and mean 9501", a)
	}
	// Two values in one bucket: the quantiles stay between them.
	h = NewHistogram()
	h.Add(1000 * time.Millisecond)
	h.Add(1003 * time.Millisecond)
	if lo, hi := h.Quantile(0.01), h.Quantile(1); lo < 1000*time.Millisecond || hi > 1003*time.Millisecond {
		t.Errorf("quantiles %v, %v outside [1s, 1.003s]", lo, hi)
	}
	if cdf := h.Cdf(10); cdf[0].Ms < 1000 || cdf[len(cdf)-1].Ms > 1003 {
		t.Errorf("cdf %v outside [1000, 1003] ms", cdf)
	}
}

func TestLevelTimeAverage(t *testing.T) {
	l := level{end: 10 * time.Second}
	l.add(0, 2)               // 2 from 0 s
	l.add(4*time.Second, -1)  // 1 from 4 s
	l.add(6*time.Second, 3)   // 4 from 6 s
	l.add(12*time.Second, -4) // past the end: not counted
	// (2×4 + 1×2 + 4×4) ÷ 10 = 2.6
	if got := l.mean(); math.Abs(got-2.6) > 1e-12 {
		t.Errorf("mean = %v, want 2.6", got)
	}
}

// A histogram counts its values by HdrHistogram index itself and flushes
// them into its HdrHistogram when read: what it holds then is exactly what
// recording every value in the HdrHistogram gives (the same counts in the
// same buckets, the same total), for values across the whole range and at
// every bucket's edges, read between adds as well as at the end.
func TestHistogramPendingMatchesHdr(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	h := NewHistogram()
	ref := hdrhistogram.New(1, int64(HistMax), HDRSignificantDigits)
	add := func(d time.Duration) {
		h.Add(d)
		if err := ref.RecordValue(int64(min(max(d, 0), HistMax))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 200_000 {
		switch i % 4 {
		case 0:
			add(time.Duration(rng.Int64N(4 * subHalf)))
		case 1:
			add(time.Duration(rng.Int64N(int64(HistMax) + 1)))
		case 2:
			add(time.Duration(rng.ExpFloat64() * float64(300*time.Millisecond)))
		default:
			// A bucket's edge: a power of two, or one less.
			add(time.Duration(int64(1)<<rng.IntN(40+10)) - time.Duration(rng.IntN(2)))
		}
		if i%50_000 == 0 {
			_ = h.Full()
		}
	}
	add(HistMax)
	add(HistMax + 1)
	add(-1)
	got, want := h.Full(), ref
	if got.TotalCount() != want.TotalCount() || !slices.Equal(got.Export().Counts, want.Export().Counts) {
		t.Fatalf("flushed histogram differs from recording each value: total %d, want %d", got.TotalCount(), want.TotalCount())
	}
	for i := range len(want.Export().Counts) {
		if got := hdrIndex(hdrValue(i)); got != i {
			t.Fatalf("hdrIndex(hdrValue(%d)) = %d", i, got)
		}
	}
}
