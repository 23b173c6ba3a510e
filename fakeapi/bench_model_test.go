package fakeapi

import (
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

// BenchmarkModelAdmit measures one admission and its Finish on a service
// with request and token limits high enough to admit one request per 100 µs
// of virtual time (600k/min, 9M tokens/min), lognormal
// latency and faults enabled; it reports admissions per second.
func BenchmarkModelAdmit(b *testing.B) {
	for _, alg := range []spec.Algorithm{spec.TokenBucket, spec.FixedWindow, spec.SlidingWindow} {
		b.Run(string(alg), func(b *testing.B) {
			m := newTestModel(b, ServiceConfig{Config: spec.Config{Name: "llm", Algorithm: alg, RPM: 10_000_000, TPM: 50_000_000,
				MaxConcurrent: 1000, Latency: spec.Dist[time.Duration]{Kind: spec.DistLognormal, P50: 300 * ms, P95: 900 * ms},
				Faults: spec.Faults{ErrorRate: 0.01}}})
			req := Request{Client: "session-1", Tokens: 10, OutputTokens: 5}
			b.ReportAllocs()
			b.ResetTimer()
			now := time.Duration(0)
			for range b.N {
				now += 100 * time.Microsecond
				d := m.Arrive(now, req)
				if d.ID == 0 {
					b.Fatalf("rejected: %+v", d)
				}
				m.Finish(now+d.Latency, d.ID, false)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "admissions/s")
		})
	}
}

// BenchmarkModelReject measures a 429 decision for a client hammering a
// limited service.
func BenchmarkModelReject(b *testing.B) {
	m := newTestModel(b, ServiceConfig{Config: spec.Config{Name: "llm", RPM: 60}})
	req := Request{Client: "session-1"}
	b.ReportAllocs()
	now := time.Duration(0)
	for range b.N {
		now += time.Microsecond
		m.Arrive(now, req)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}
