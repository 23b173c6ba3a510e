package live

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
)

// Lateness above which a live run is marked invalid: the machine could not
// keep the scenario's timing. Both are in real time.
const (
	lateAbsolute = 5 * time.Millisecond
	lateFraction = 0.10 // of the scenario's mean think time or inter-arrival gap
)

// How far a live run may drift from the same run in virtual time before it
// is marked invalid. The live driver draws the same workload distributions
// and runs the same scheduler code against the same service model, so
// figures of the distribution's centre must agree up to sampling noise:
// the share of turns answered, the median turn latency and the goodput.
// The tails (p95, p99) and the 429 counts hinge on the exact timing of a
// few requests and differ between any two seeds, so they are not compared.
// A live run at a time scale the machine cannot keep (each request's
// real-time overhead grows 1/scale in scenario time) drifts well beyond
// these bounds: 2-3x on latency at 0.01.
const (
	// agreeShare bounds the difference in answered share, in share points.
	agreeShare = 0.10
	// agreeRelative bounds the relative difference of the median turn
	// latency and of goodput.
	agreeRelative = 0.25
	// agreeMinTurns is the fewest turns each side needs before the
	// figures of the centre are compared; with fewer, only the number of
	// turns begun is (turnsAgree).
	agreeMinTurns = 20
)

// turnsAgree says whether live began about as many turns as virtual, at any
// count: within agreeRelative of the virtual count, or, for few turns,
// within three standard deviations of a Poisson count (3√v + 1), whichever
// is wider. A machine that cannot keep the timing begins far fewer turns
// (4 for 600 at a time scale of 1e-5), and with few turns this is the one
// figure that still says so.
func turnsAgree(l, v int64) bool {
	bound := max(agreeRelative*float64(v), 3*math.Sqrt(float64(v))+1)
	return math.Abs(float64(l-v)) <= bound
}

// disagreement says how a strategy's live figures differ from its run in
// virtual time beyond the bounds above, or "" when they agree. The number
// of turns begun is compared at any count; the centre of the distribution
// only when both sides have agreeMinTurns turns.
func disagreement(live, virtual *results.StrategyResult) string {
	var diffs []string
	lt, vt := live.Turns+live.FailedTurns, virtual.Turns+virtual.FailedTurns
	if !turnsAgree(lt, vt) {
		diffs = append(diffs, fmt.Sprintf("%d turns begun vs %d", lt, vt))
	}
	if lt < agreeMinTurns || vt < agreeMinTurns {
		return disagreementText(diffs)
	}
	if l, v := live.AnswerLatencyMs.AnsweredShare, virtual.AnswerLatencyMs.AnsweredShare; math.Abs(l-v) > agreeShare {
		diffs = append(diffs, fmt.Sprintf("answered share %.2f vs %.2f", l, v))
	}
	if l, v := live.TurnLatencyMs.P50, virtual.TurnLatencyMs.P50; relDiff(l, v) > agreeRelative {
		diffs = append(diffs, fmt.Sprintf("p50 turn latency %.0f ms vs %.0f ms", l, v))
	}
	if l, v := live.GoodputPerS, virtual.GoodputPerS; relDiff(l, v) > agreeRelative {
		diffs = append(diffs, fmt.Sprintf("goodput %.2f/s vs %.2f/s", l, v))
	}
	return disagreementText(diffs)
}

// disagreementText is disagreement's sentence for the differences found.
func disagreementText(diffs []string) string {
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("live figures differ from the same run in virtual time (%s; tolerance: turns begun ±%.0f%% or 3√n+1, answered share ±%.2f, p50 and goodput ±%.0f%%): try a larger --time-scale",
		strings.Join(diffs, ", "), agreeRelative*100, agreeShare, agreeRelative*100)
}

// relDiff is |a-b| relative to b; 0 when both are 0, +Inf when only b is.
func relDiff(a, b float64) float64 {
	switch {
	case a == b:
		return 0
	case b == 0:
		return math.Inf(1)
	}
	return math.Abs(a-b) / math.Abs(b)
}

func joinReasons(r []string) string {
	s := r[0]
	for _, x := range r[1:] {
		s += "; " + x
	}
	return s
}

// judge marks the run invalid when the machine could not keep its timing.
func (l *liveRun) judge(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	if g := &l.shell.load; g.stopped != "" || g.notSent > 0 {
		// Not the scenario measured, but the machine's limit.
		l.invalid = g.stopped
		if g.stopped == "" {
			l.invalid = g.notSentReason()
		}
		return
	}
	if l.noAnswer > 0 {
		// Not the provider's limits measured, but a provider out of reach.
		var attempts int64
		for _, p := range l.procs {
			attempts += p.attempts
		}
		l.invalid = fmt.Sprintf("%d of %d attempts got no HTTP answer from the provider (the first: %v); is it running at the address given, and is it `simbench serve`?", l.noAnswer, attempts, l.noAnswerErr)
		return
	}
	w := &l.sc.Workload
	var gap time.Duration
	if w.Sessions > 0 {
		gap = time.Duration(setup.NewSampler(w.Think).Mean())
	} else {
		gap = time.Duration(float64(time.Second) / w.ArrivalRate)
		want := w.ArrivalRate * l.sc.Duration.Seconds()
		if float64(l.arrived) < 0.9*want {
			l.invalid = fmt.Sprintf("started %d turns of the %.0f offered", l.arrived, want)
			return
		}
	}
	limit := max(lateAbsolute, time.Duration(lateFraction*float64(gap)))
	if p95 := l.late.Quantile(0.95); l.late.N > 0 && p95 > limit {
		l.invalid = fmt.Sprintf("timers fired %v late (p95, real time), above the %v the scenario's timing tolerates", p95.Round(time.Microsecond), limit)
	}
}
