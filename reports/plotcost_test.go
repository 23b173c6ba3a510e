package reports

import (
	"context"
	"strings"
	"testing"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// The contention built-in compares backoffs on a finite workload: its
// backoff figure renders, with each strategy's total attempts beside its
// time to finish, the figures read from the results.
func TestBackoffFigureForContention(t *testing.T) {
	sc, err := scenarios.Builtin("contention")
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svg := figureSVG(t, r, Options{}, "backoff")
	wants := []string{"Total attempts beside the time to finish the workload", "time to finish"}
	for _, s := range r.Strategies {
		if s.FinishS == 0 {
			t.Fatalf("%s has no time to finish", s.Name)
		}
		wants = append(wants, s.Name+"\n"+num(float64(s.Attempts))+" attempts, "+dec1(s.FinishS)+" s")
	}
	for _, want := range wants {
		// SVG text holds one line of a label per element.
		for _, line := range strings.Split(want, "\n") {
			if !strings.Contains(svg, line) {
				t.Errorf("backoff.svg lacks %q", line)
			}
		}
	}
	figs, err := Figures(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		if f.Name != "backoff" {
			continue
		}
		if png, err := f.PNG(); err != nil || len(png) == 0 {
			t.Fatalf("backoff.png: %d bytes, %v", len(png), err)
		}
		return
	}
	t.Fatal("no backoff figure for contention")
}

// Without a finite workload the backoff figure is as it was, without the
// cost panel; a strategy that did not finish a finite one is marked so.
func TestCostPanelOnlyForAFiniteWorkload(t *testing.T) {
	svg := figureSVG(t, backoffResults(), Options{}, "backoff")
	if strings.Contains(svg, "Total attempts") || strings.Contains(svg, "time to finish") {
		t.Error("a cost panel for a workload that runs until the duration ends")
	}
	r := backoffResults()
	r.Strategies[len(r.Strategies)-1].FinishS = 42.5
	svg = figureSVG(t, r, Options{}, "backoff")
	for _, want := range []string{"Total attempts beside the time to finish the workload", "61,310 attempts, 42.5 s", "did not finish"} {
		if !strings.Contains(svg, want) {
			t.Errorf("backoff.svg lacks %q", want)
		}
	}
}
