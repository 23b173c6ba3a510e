package live

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// BenchmarkLiveVsVegeta pairs, in the same run, a live run of
// testdata/flood-16k.toml (16,000 calls/s offered, 5-15 ms each, no cap)
// with vegeta at its fastest against a fake server of the same service, as
// `simbench serve` serves it. Both hold at most as many requests in flight
// as a live run under a 256 MiB budget does (LiveInFlight). It reports
// what each answered per second of real time (the live run's up to the end
// of its window or its early stop, as its progress last showed it), and
// ratio, live over vegeta.
func BenchmarkLiveVsVegeta(b *testing.B) {
	sc, err := scenarios.Load(filepath.Join("testdata", "flood-16k.toml"))
	if err != nil {
		b.Fatal(err)
	}
	budget := int64(256 << 20)
	inFlight := LiveInFlight(budget)
	const attack = 3 * time.Second
	var liveRate, vegetaRate float64
	for b.Loop() {
		vegetaRate += vegetaMax(b, sc, inFlight, attack)
		liveRate += liveAnswered(b, sc, budget, attack)
	}
	n := float64(b.N)
	b.ReportMetric(liveRate/n, "live-calls/s")
	b.ReportMetric(vegetaRate/n, "vegeta-req/s")
	b.ReportMetric(liveRate/vegetaRate, "ratio")
}

// vegetaMax attacks a fake server of sc's services as fast as vegeta can
// with at most inFlight workers for d, and returns its successful requests
// per second.
func vegetaMax(b *testing.B, sc *scenarios.Scenario, inFlight int, d time.Duration) float64 {
	var svcs []fakeapi.ServiceConfig
	for i := range sc.Services {
		svcs = append(svcs, setup.ServeConfig(sc, &sc.Services[i]))
	}
	srv, err := fakeapi.Start(fakeapi.ServerConfig{Services: svcs, Seed: sc.Seed, TimeScale: 1, Warn: io.Discard, MaxConns: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	tr := newTransport(inFlight)
	defer tr.CloseIdleConnections()
	svc := sc.Services[0].Name
	target := vegeta.Target{Method: http.MethodGet, URL: srv.URL(svc) + "/tools/" + sc.Tools[0].Name,
		Header: http.Header{fakeapi.TokensHeader: {"0"}, fakeapi.ClientHeader: {"vegeta"}}}
	atk := vegeta.NewAttacker(vegeta.Client(&http.Client{Transport: tr}), vegeta.Workers(uint64(inFlight)), vegeta.MaxWorkers(uint64(inFlight)))
	var m vegeta.Metrics
	for r := range atk.Attack(vegeta.NewStaticTargeter(target), vegeta.Rate{Freq: 0}, d, "max") {
		m.Add(r)
	}
	m.Close()
	if m.Success == 0 {
		b.Fatalf("vegeta: no request succeeded (%v)", m.Errors)
	}
	return m.Throughput
}

// liveAnswered runs sc live for d under budget, and returns the calls it
// answered per second of the scenario's time it played.
func liveAnswered(b *testing.B, sc *scenarios.Scenario, budget int64, d time.Duration) float64 {
	var mu sync.Mutex
	var played time.Duration
	progress := func(_ string, done, _ time.Duration) {
		mu.Lock()
		played = max(played, done)
		mu.Unlock()
	}
	res, err := RunLive(context.Background(), sc, LiveOptions{Options: sim.Options{MaxMemory: budget, Duration: d, Progress: progress}})
	if err != nil {
		b.Fatal(err)
	}
	s := &res.Strategies[0]
	mu.Lock()
	defer mu.Unlock()
	if played <= 0 {
		b.Fatal("the live run showed no progress")
	}
	b.Logf("live: %d calls, %d failed, %d not sent in %v played; %s", s.Calls, s.Failed, s.NotSent, played, s.Invalid)
	return float64(s.Calls-s.Failed) / played.Seconds()
}
