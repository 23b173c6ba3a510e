package spec

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func newRand() *rand.Rand { return rand.New(rand.NewPCG(7, 11)) }

// TestSamplerDrawsNothingForFixedValues: a constant, a uniform of no width
// and the zero Dist give their value without touching the stream.
func TestSamplerDrawsNothingForFixedValues(t *testing.T) {
	tests := []struct {
		give Dist[time.Duration]
		want float64
	}{
		{Dist[time.Duration]{}, 0},
		{Constant(3 * time.Second), float64(3 * time.Second)},
		{Dist[time.Duration]{Kind: DistUniform, Min: time.Second, Max: time.Second}, float64(time.Second)},
	}
	for _, tt := range tests {
		rng, ref := newRand(), newRand()
		if got := NewSampler(tt.give).Draw(rng); got != tt.want {
			t.Errorf("%+v: draw = %v, want %v", tt.give, got, tt.want)
		}
		if rng.Uint64() != ref.Uint64() {
			t.Errorf("%+v: the draw used the stream", tt.give)
		}
	}
}

// TestSamplerStreamUse pins how uniform and empirical draw from the stream,
// which the built-in scenarios' results depend on.
func TestSamplerStreamUse(t *testing.T) {
	rng, ref := newRand(), newRand()
	u := NewSampler(Dist[float64]{Kind: DistUniform, Min: 2, Max: 6})
	if got, want := u.Draw(rng), 2+4*ref.Float64(); got != want {
		t.Errorf("uniform draw = %v, want %v", got, want)
	}
	samples := []float64{5, 1, 9, 3}
	e := NewSampler(Dist[float64]{Kind: DistEmpirical, Samples: samples})
	for range 20 {
		if got, want := e.Draw(rng), samples[ref.IntN(len(samples))]; got != want {
			t.Fatalf("empirical draw = %v, want %v: draws resample the values in file order", got, want)
		}
	}
}

// TestSamplerCapsAndClamps: Max caps the unbounded families, and draws
// below 0 count as 0.
func TestSamplerCapsAndClamps(t *testing.T) {
	rng := newRand()
	capped := NewSampler(Dist[time.Duration]{Kind: DistPareto, Min: time.Millisecond, Alpha: 0.5, Max: 20 * time.Millisecond})
	normal := NewSampler(Dist[float64]{Kind: DistNormal, Mean: 0, Stddev: 10})
	sawCap, sawZero := false, false
	for range 10_000 {
		v := capped.Draw(rng)
		if v > float64(20*time.Millisecond) || v < float64(time.Millisecond) {
			t.Fatalf("pareto draw %v outside [1ms, 20ms]", time.Duration(v))
		}
		sawCap = sawCap || v == float64(20*time.Millisecond)
		n := normal.Draw(rng)
		if n < 0 {
			t.Fatalf("normal draw %v is negative", n)
		}
		sawZero = sawZero || n == 0
	}
	if !sawCap || !sawZero {
		t.Errorf("saw the cap %v, saw a clamped 0 %v; want both", sawCap, sawZero)
	}
}

func TestSamplerMean(t *testing.T) {
	tests := []struct {
		give Dist[float64]
		want float64
	}{
		{Constant(4.0), 4},
		{Dist[float64]{Kind: DistUniform, Min: 2, Max: 6}, 4},
		{Dist[float64]{Kind: DistNormal, Mean: 5, Stddev: 1}, 5},
		{Dist[float64]{Kind: DistExponential, Mean: 3}, 3},
		// exp(mu + sigma²/2) with mu = ln 10, sigma = ln 2 / z95.
		{Dist[float64]{Kind: DistLognormal, P50: 10, P95: 20}, 10 * math.Exp(math.Pow(math.Log(2)/z95, 2)/2)},
		// alpha·xm/(alpha−1) = 3·2/2.
		{Dist[float64]{Kind: DistPareto, Min: 2, Alpha: 3}, 3},
		{Dist[float64]{Kind: DistEmpirical, Samples: []float64{1, 2, 6}}, 3},
	}
	for _, tt := range tests {
		if got := NewSampler(tt.give).Mean(); math.Abs(got-tt.want) > 1e-9*tt.want {
			t.Errorf("%s: mean = %v, want %v", tt.give.Kind, got, tt.want)
		}
	}
}
