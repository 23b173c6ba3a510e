//go:build long

package main

import (
	"regexp"
	"strings"
	"testing"
)

// The same configuration, all three strategies, on five different seeds a
// side: of the 40-odd metrics compared none is worse (nor better), and
// --fail-on worse passes. (Ten tier3 runs of 2 virtual minutes each, a
// minute and a half under the race detector: a long check. The default
// suite keeps compare's verdicts on seeded runs, TestCompareSameSeedsCountsACapChange
// and TestCompareTwoSeedsASideIsUndecided, and the judge's own rate of
// changes on one configuration, internal/judge's
// TestUnpairedSameConfigurationRarelyChanges.)
func TestLongCompareDifferentSeedsSameConfigurationIsNotWorse(t *testing.T) {
	old, nw := seededRun(t, 64, 42, 5, true), seededRun(t, 64, 100, 5, true)
	code, stdout, stderr := compareCLI(t, old, nw, "--fail-on", "worse")
	if code != 0 || !strings.Contains(stdout, "0 better, 0 worse") {
		t.Errorf("exit %d (%s); want 0 and nothing worse:\n%s", code, stderr, stdout)
	}
	for _, name := range []string{"sequential", "unbounded", "bounded-64"} {
		if !regexp.MustCompile(`(?m)^` + name + ` +\S`).MatchString(stdout) {
			t.Errorf("no row of %s:\n%s", name, stdout)
		}
	}
}
