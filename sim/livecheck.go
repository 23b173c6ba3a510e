package sim

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

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
	// agreeMinTurns is the fewest turns each side needs before the figures
	// are compared at all; fewer say too little to call a difference.
	agreeMinTurns = 20
)

// disagreement says how a strategy's live figures differ from its run in
// virtual time beyond the bounds above, or "" when they agree (or there
// are too few turns to tell).
func disagreement(live, virtual *results.StrategyResult) string {
	if live.Turns+live.FailedTurns < agreeMinTurns || virtual.Turns+virtual.FailedTurns < agreeMinTurns {
		return ""
	}
	var diffs []string
	if l, v := live.AnswerLatencyMs.AnsweredShare, virtual.AnswerLatencyMs.AnsweredShare; math.Abs(l-v) > agreeShare {
		diffs = append(diffs, fmt.Sprintf("answered share %.2f vs %.2f", l, v))
	}
	if l, v := live.TurnLatencyMs.P50, virtual.TurnLatencyMs.P50; relDiff(l, v) > agreeRelative {
		diffs = append(diffs, fmt.Sprintf("p50 turn latency %.0f ms vs %.0f ms", l, v))
	}
	if l, v := live.GoodputPerS, virtual.GoodputPerS; relDiff(l, v) > agreeRelative {
		diffs = append(diffs, fmt.Sprintf("goodput %.2f/s vs %.2f/s", l, v))
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("live figures differ from the same run in virtual time (%s; tolerance: answered share ±%.2f, p50 and goodput ±%.0f%%): try a larger --time-scale",
		strings.Join(diffs, ", "), agreeShare, agreeRelative*100)
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
	w := &l.sc.Workload
	var gap time.Duration
	if w.Sessions > 0 {
		gap = time.Duration(newSampler(w.Think).mean())
	} else {
		gap = time.Duration(float64(time.Second) / w.ArrivalRate)
		want := w.ArrivalRate * l.sc.Duration.Seconds()
		if float64(l.arrived) < 0.9*want {
			l.invalid = fmt.Sprintf("started %d turns of the %.0f offered", l.arrived, want)
			return
		}
	}
	limit := max(lateAbsolute, time.Duration(lateFraction*float64(gap)))
	if p95 := l.late.quantile(0.95); l.late.n > 0 && p95 > limit {
		l.invalid = fmt.Sprintf("timers fired %v late (p95, real time), above the %v the scenario's timing tolerates", p95.Round(time.Microsecond), limit)
	}
}
