//go:build long

package decision

import "testing"

// longPropertyScenarios is how many generated scenarios
// TestLongDecisionProperty decides: the 500. Each is a 15 s
// scenario of one service and four strategies; its decision takes about
// 0.5 s of CPU (one run at a time, one decision at a time): the 500 took
// 4.1 CPU-minutes, 5.9 minutes on a 2-core machine at a load of 9.
const longPropertyScenarios = 500

// TestLongDecisionProperty is TestDecisionProperty over
// longPropertyScenarios generated scenarios, the race suite's first ones
// among them. The 432nd (rapid's seed 93134: -rapid.seed=93134 decides it
// first) is a noisy one (p95 about 0.5 s ± 0.7 s) where the decision set
// "both" at cap 1, found worse than unbounded as written: each sweep of the
// best configuration measured ran more seeds of runs whose earlier points
// were still weighed, and after three the best cap of the last sweep was
// set. Weighing each configuration on its latest seeds is what fixes it:
// without that, the fallback as it is now sets both at cap 6, quoted at
// p95 461 ms from 3 seeds where its 9 seeds give 1,042 ms.
// TestSetBestSetsTheLowestScoringConfiguration checks the fallback.
func TestLongDecisionProperty(t *testing.T) {
	checkDecisionProperty(t, longPropertyScenarios, propertySeed)
}
