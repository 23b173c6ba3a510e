package fakeapi

import (
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

// draws returns n sorted latencies, in nanoseconds, from a model of c.
func draws(t *testing.T, c spec.Dist[time.Duration], n int) []float64 {
	t.Helper()
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", Latency: c}})
	out := make([]float64, n)
	for i := range out {
		d := m.Arrive(0, Request{})
		out[i] = float64(d.Latency)
		m.Finish(0, d.ID, false)
	}
	slices.Sort(out)
	return out
}

func within(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*want {
		t.Errorf("%s = %v, want %v ± %.0f%%", name, time.Duration(got), time.Duration(want), tol*100)
	}
}

func TestLogNormalQuantiles(t *testing.T) {
	d := draws(t, spec.Dist[time.Duration]{Kind: spec.DistLognormal, P50: 1200 * ms, P95: 3 * time.Second}, 100_000)
	within(t, "p50", interpolate(d, 0.5), float64(1200*ms), 0.02)
	within(t, "p95", interpolate(d, 0.95), float64(3*time.Second), 0.02)
}

func TestDistributionMeans(t *testing.T) {
	tests := []struct {
		give spec.Dist[time.Duration]
		want time.Duration // mean
	}{
		{spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 7 * ms}, 7 * ms},
		{spec.Dist[time.Duration]{Kind: spec.DistUniform, Min: 200 * ms, Max: 900 * ms}, 550 * ms},
		{spec.Dist[time.Duration]{Kind: spec.DistNormal, Mean: 500 * ms, Stddev: 50 * ms}, 500 * ms},
		{spec.Dist[time.Duration]{Kind: spec.DistExponential, Mean: 300 * ms}, 300 * ms},
		// Pareto mean: alpha·xm/(alpha-1) = 3·100ms/2.
		{spec.Dist[time.Duration]{Kind: spec.DistPareto, Min: 100 * ms, Alpha: 3}, 150 * ms},
	}
	for _, tt := range tests {
		d := draws(t, tt.give, 100_000)
		var sum float64
		for _, v := range d {
			sum += v
		}
		within(t, string(tt.give.Kind)+" mean", sum/float64(len(d)), float64(tt.want), 0.02)
	}
}

func TestEmpiricalReproducesFileQuantiles(t *testing.T) {
	cfg := ServiceConfig{Config: spec.Config{Name: "s", Latency: spec.Dist[time.Duration]{Kind: spec.DistEmpirical, File: "testdata/latencies.txt"}}}
	if err := cfg.LoadFiles(); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Latency.Samples) != 200 {
		t.Fatalf("loaded %d samples, want 200", len(cfg.Latency.Samples))
	}
	file := make([]float64, len(cfg.Latency.Samples))
	for i, s := range cfg.Latency.Samples {
		file[i] = float64(s)
	}
	slices.Sort(file)
	// Draws resample the file: each is one of its values, and the share of
	// draws at or below a value is the share of the file's values there.
	d := draws(t, cfg.Latency, 100_000)
	for _, v := range d {
		if _, found := slices.BinarySearch(file, v); !found {
			t.Fatalf("draw %v is not a value of the file", time.Duration(v))
		}
	}
	atOrBelow := func(data []float64, q float64) float64 {
		n, _ := slices.BinarySearch(data, math.Nextafter(q, math.Inf(1)))
		return float64(n) / float64(len(data))
	}
	for _, p := range []float64{0.05, 0.25, 0.5, 0.75, 0.95} {
		q := file[int(p*float64(len(file)-1))]
		within(t, "share at or below "+time.Duration(q).String(), atOrBelow(d, q), atOrBelow(file, q), 0.05)
	}
	if d[0] < file[0] || d[len(d)-1] > file[len(file)-1] {
		t.Errorf("draws [%v, %v] leave the file's range [%v, %v]", d[0], d[len(d)-1], file[0], file[len(file)-1])
	}
}

// interpolate returns the p-quantile of sorted data with linear
// interpolation between order statistics (the "type 7" definition).
func interpolate(sorted []float64, p float64) float64 {
	switch len(sorted) {
	case 0:
		return 0
	case 1:
		return sorted[0]
	}
	pos := p * float64(len(sorted)-1)
	i := int(pos)
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	return sorted[i] + f*(sorted[i+1]-sorted[i])
}

func TestLoadSensitivity(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", Latency: spec.Dist[time.Duration]{Value: 100 * ms}, Load: spec.Load{Knee: 2, Factor: 0.5}}})
	var got []time.Duration
	for range 5 {
		got = append(got, m.Arrive(0, Request{}).Latency)
	}
	// In flight before each: 0,1,2,3,4; above the knee of 2: 0,0,0,1,2.
	want := []time.Duration{100 * ms, 100 * ms, 100 * ms, 150 * ms, 200 * ms}
	if !slices.Equal(got, want) {
		t.Fatalf("latencies = %v, want %v", got, want)
	}
}

func TestEmpiricalNeedsLoadedSamples(t *testing.T) {
	_, err := NewModel(ServiceConfig{Config: spec.Config{Name: "s", Latency: spec.Dist[time.Duration]{Kind: spec.DistEmpirical, File: "x"}}}, rand.New(rand.NewPCG(1, 1)))
	if err == nil || !strings.Contains(err.Error(), "LoadFiles") {
		t.Fatalf("NewModel = %v, want a LoadFiles hint", err)
	}
	cfg := ServiceConfig{Config: spec.Config{Name: "s", Latency: spec.Dist[time.Duration]{Kind: spec.DistEmpirical, File: "testdata/missing.txt"}}}
	if err := cfg.LoadFiles(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadFiles(missing) = %v", err)
	}
}
