package judge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestPairedCountsAnyChange(t *testing.T) {
	tests := []struct {
		name     string
		old, new []float64
		want     Outcome
	}{
		{"identical", []float64{3, 4, 5}, []float64{3, 4, 5}, Same},
		{"floating-point noise", []float64{3, 4, 5}, []float64{3 * (1 + 1e-12), 4, 5}, Same},
		{"one seed slower by 0.1%", []float64{100, 100, 100}, []float64{100.1, 100, 100}, Up},
		{"every seed faster", []float64{100, 110, 120}, []float64{90, 99, 108}, Down},
		{"a seed never answered", []float64{1, 2}, []float64{1, math.Inf(1)}, Up},
	}
	for _, tt := range tests {
		j := Judge([]Sample{{Old: tt.old, New: tt.new, Paired: true}}, Options{})[0]
		if j.Outcome != tt.want {
			t.Errorf("%s: %v, want %v (%+v)", tt.name, j.Outcome, tt.want, j)
		}
	}
	// The effect's interval is the t interval of the differences −10, −11,
	// −12: mean −11, sd 1, t(0.975, 2) = 4.302653: ±2.484138.
	j := Judge([]Sample{{Old: []float64{100, 110, 120}, New: []float64{90, 99, 108}, Paired: true}}, Options{})[0]
	if j.Delta != -11 || math.Abs(j.Hi-j.Delta-2.484138) > 1e-5 || math.Abs(j.Delta-j.Lo-2.484138) > 1e-5 {
		t.Errorf("effect %v [%v, %v], want -11 ± 2.484138", j.Delta, j.Lo, j.Hi)
	}
}

// normals draws n values of mean mu and standard deviation sd.
func normals(rng *rand.Rand, n int, mu, sd float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = mu + sd*rng.NormFloat64()
	}
	return out
}

// Fifty figures of the same configuration on different seeds, five a
// side, over 200 trials: Holm's adjustment keeps the share of trials with
// any figure called changed near alpha (5%), not near 1 − 0.95^50 (92%).
func TestUnpairedSameConfigurationRarelyChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	falseTrials := 0
	for range 200 {
		var ss []Sample
		for range 50 {
			ss = append(ss, Sample{Old: normals(rng, 5, 100, 3), New: normals(rng, 5, 100, 3)})
		}
		for _, j := range Judge(ss, Options{}) {
			if j.Outcome == Up || j.Outcome == Down {
				falseTrials++
				break
			}
		}
	}
	if falseTrials > 20 {
		t.Errorf("%d of 200 trials called a figure changed; want about 5%%", falseTrials)
	}
}

func TestUnpairedOutcomes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name string
		s    Sample
		want Outcome
	}{
		// 3 seeds a side, a 20% shift against a 1% spread.
		{"clear change", Sample{Old: normals(rng, 3, 100, 1), New: normals(rng, 3, 120, 1)}, Up},
		// 10 seeds a side, a 0.5% spread: power to see 5% is ample.
		{"no change, enough seeds", Sample{Old: normals(rng, 10, 100, 0.5), New: normals(rng, 10, 100, 0.5)}, Noise},
		// 2 seeds a side, a 5% spread: far too few.
		{"no change, too few seeds", Sample{Old: normals(rng, 2, 100, 5), New: normals(rng, 2, 100, 5)}, Undecided},
		{"one seed a side", Sample{Old: []float64{100}, New: []float64{103}}, Undecided},
		{"every seed agrees on each side", Sample{Old: []float64{8, 8, 8}, New: []float64{7, 7, 7}}, Down},
		{"all equal", Sample{Old: []float64{8, 8}, New: []float64{8, 8, 8}}, Same},
	}
	for _, tt := range tests {
		j := Judge([]Sample{tt.s}, Options{})[0]
		if j.Outcome != tt.want {
			t.Errorf("%s: %v, want %v (%+v)", tt.name, j.Outcome, tt.want, j)
		}
		if j.Outcome == Undecided && j.SeedsNeeded < 2 {
			t.Errorf("%s: undecided without the seeds needed (%+v)", tt.name, j)
		}
	}
}

// The seeds needed against textbook two-sample t-test sample sizes (α =
// 0.05 two-sided, power 80%): an effect of one standard deviation needs 17
// a side, half of one 64 (Cohen's tables; G*Power gives 17 and 64).
func TestSeedsNeeded(t *testing.T) {
	// Old mean 100, spread 20 (sd of {80, 120}): MinEffect 0.2 is one sd.
	one := SeedsNeeded([]float64{100 - 20/math.Sqrt2, 100 + 20/math.Sqrt2}, []float64{100 - 20/math.Sqrt2, 100 + 20/math.Sqrt2}, 0.2, 0.05, 0.8)
	half := SeedsNeeded([]float64{100 - 20/math.Sqrt2, 100 + 20/math.Sqrt2}, []float64{100 - 20/math.Sqrt2, 100 + 20/math.Sqrt2}, 0.1, 0.05, 0.8)
	if one != 17 || half != 64 {
		t.Errorf("seeds needed %d and %d, want 17 and 64", one, half)
	}
	if n := SeedsNeeded([]float64{1}, []float64{2}, 0.05, 0.05, 0.8); n != 2 {
		t.Errorf("no spread measured: %d, want 2", n)
	}
}

func TestHolm(t *testing.T) {
	js := []Judgement{{P: 0.01}, {P: 0.04}, {P: 0.03}, {P: 0.005}}
	// Sorted: 0.005 ≤ 0.05/4, 0.01 ≤ 0.05/3, 0.03 > 0.05/2: stop.
	got := holm([]int{0, 1, 2, 3}, js, 0.05)
	want := []bool{true, false, false, true}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("holm = %v, want %v", got, want)
		}
	}
}

// Judge on the same seeds counts any change; on different seeds it asks
// for enough seeds to tell a change from their spread.
func ExampleJudge() {
	js := Judge([]Sample{
		{Old: []float64{3483, 3460, 3507}, New: []float64{4140, 4120, 4160}, Paired: true},
		{Old: []float64{3488, 3400}, New: []float64{3472, 3550}},
	}, Options{})
	for _, j := range js {
		fmt.Printf("%v, delta %+.0f, seeds needed %d\n", j.Outcome, j.Delta, j.SeedsNeeded)
	}
	// Output:
	// up, delta +657, seeds needed 0
	// undecided, delta +67, seeds needed 4
}
