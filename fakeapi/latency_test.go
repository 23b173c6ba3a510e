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
)

// draws returns n sorted latencies, in nanoseconds, from a model of c.
func draws(t *testing.T, c LatencyConfig, n int) []float64 {
	t.Helper()
	m := newTestModel(t, ServiceConfig{Name: "s", Latency: c})
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
	d := draws(t, LatencyConfig{Dist: DistLogNormal, P50: 1200 * ms, P95: 3 * time.Second}, 100_000)
	within(t, "p50", interpolate(d, 0.5), float64(1200*ms), 0.02)
	within(t, "p95", interpolate(d, 0.95), float64(3*time.Second), 0.02)
}

func TestDistributionMeans(t *testing.T) {
	tests := []struct {
		give LatencyConfig
		want time.Duration // mean
	}{
		{LatencyConfig{Dist: DistConstant, Value: 7 * ms}, 7 * ms},
		{LatencyConfig{Dist: DistUniform, Min: 200 * ms, Max: 900 * ms}, 550 * ms},
		{LatencyConfig{Dist: DistNormal, Mean: 500 * ms, StdDev: 50 * ms}, 500 * ms},
		{LatencyConfig{Dist: DistExponential, Mean: 300 * ms}, 300 * ms},
		// Pareto mean: alpha·xm/(alpha-1) = 3·100ms/2.
		{LatencyConfig{Dist: DistPareto, Scale: 100 * ms, Alpha: 3}, 150 * ms},
	}
	for _, tt := range tests {
		d := draws(t, tt.give, 100_000)
		var sum float64
		for _, v := range d {
			sum += v
		}
		within(t, string(tt.give.Dist)+" mean", sum/float64(len(d)), float64(tt.want), 0.02)
	}
}

func TestEmpiricalReproducesFileQuantiles(t *testing.T) {
	cfg := ServiceConfig{Name: "s", Latency: LatencyConfig{Dist: DistEmpirical, File: "testdata/latencies.txt"}}
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
	d := draws(t, cfg.Latency, 100_000)
	for _, p := range []float64{0.05, 0.25, 0.5, 0.75, 0.95} {
		within(t, "quantile", interpolate(d, p), interpolate(file, p), 0.02)
	}
	if d[0] < file[0] || d[len(d)-1] > file[len(file)-1] {
		t.Errorf("draws [%v, %v] leave the file's range [%v, %v]", d[0], d[len(d)-1], file[0], file[len(file)-1])
	}
}

func TestReadSamplesErrors(t *testing.T) {
	tests := []struct{ give, want string }{
		{"10\nfast\n", `line 2: "fast"`},
		{"-5ms\n", "line 1: latency -5ms is negative"},
		{"# only a comment\n", "no latencies"},
	}
	for _, tt := range tests {
		_, err := ReadSamples(strings.NewReader(tt.give))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadSamples(%q) = %v, want %q", tt.give, err, tt.want)
		}
	}
}

func TestLoadSensitivity(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Name: "s", Latency: LatencyConfig{Value: 100 * ms, LoadKnee: 2, LoadSlope: 0.5}})
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
	_, err := NewModel(ServiceConfig{Name: "s", Latency: LatencyConfig{Dist: DistEmpirical, File: "x"}}, rand.New(rand.NewPCG(1, 1)))
	if err == nil || !strings.Contains(err.Error(), "LoadFiles") {
		t.Fatalf("NewModel = %v, want a LoadFiles hint", err)
	}
	cfg := ServiceConfig{Name: "s", Latency: LatencyConfig{Dist: DistEmpirical, File: "testdata/missing.txt"}}
	if err := cfg.LoadFiles(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadFiles(missing) = %v", err)
	}
}
