package results

import (
	"math"
	"testing"
)

func TestIntervalOf(t *testing.T) {
	// Mean 3, sample sd √2.5; t(0.975, 4) = 2.776445: half width 1.963243.
	iv := IntervalOf([]float64{1, 2, 3, 4, 5})
	if iv.Mean != 3 || iv.N != 5 || math.Abs(iv.HalfWidth()-1.963243) > 1e-5 {
		t.Errorf("interval %+v (half %v), want mean 3 ± 1.963243", iv, iv.HalfWidth())
	}
	if one := IntervalOf([]float64{7}); one.Lo != 7 || one.Hi != 7 {
		t.Errorf("one value: %+v, want [7, 7]", one)
	}
	if inf := IntervalOf([]float64{1, math.Inf(1)}); !math.IsInf(inf.Mean, 1) {
		t.Errorf("an unanswered seed: %+v, want an infinite mean", inf)
	}
	b, err := IntervalOf([]float64{1, math.Inf(1)}).MarshalJSON()
	if err != nil || string(b) != `{"mean":null,"lo":null,"hi":null,"n":2}` {
		t.Errorf("json %s, %v", b, err)
	}
}
