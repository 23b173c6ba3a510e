package scenarios_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
)

// serviceLines are the lines a generated [services.api] table picks from:
// each key valid, contradictory or out of range, so that combinations
// reach the rules the decoder and the validator share.
var serviceLines = [][]string{
	{"", "rps = 5", "rps = 0.5", "rps = 16666666666666", "rps = \"2/s\""},
	{"", "rpm = 600", "rpm = 1_000_000_000_000_000", "rpm = 10.5"},
	{"", "tpm = 100000", "tpm = 1"},
	{"", "burst = 5", "burst = 1_000_000_000_000_000"},
	{"", `limiter = "fixed_window"`, `limiter = "sliding_window"`, `limiter = "token_bucket"`},
	{"", "max_concurrent = 4"},
	{"", `latency = "100ms"`, `latency = { dist = "lognormal", p50 = "100ms", p95 = "100ms" }`,
		`latency = { dist = "lognormal", p50 = "100ms", p95 = "300ms", max = "50ms" }`,
		`latency = { dist = "uniform", min = "100ms", max = "100ms" }`, `latency = { dist = "pareto", min = "10ms", alpha = 1.5 }`,
		`latency = { dist = "normal", mean = "100ms", stddev = "30ms", max = "1s" }`, `latency = { dist = "exponential", mean = "1s" }`},
	{"", `headers = "openai"`, `headers = "anthropic"`, `headers = "standard"`, `headers = "none"`},
	{"", `lying = "short"`, `lying = "missing"`},
	{"", `keys = ["a", "b"]`, `keys = ["a", "a"]`},
	{"", "faults = { error_rate = 0.5, hang_rate = 0.6 }", "faults = { conflict = true, reset_rate = 0.1 }",
		`faults = { overload = { every = "1m", length = "5s", rate = 0.5 } }`, `faults = { slow_first_byte = { rate = 0.1, delay = "1s" } }`},
	{"", `background = { rate = "20/s", tokens = 500, burst = 4 }`},
	{"", "load = { knee = 2, factor = 0.1 }"},
	{"", `ttft = { dist = "lognormal", p50 = "300ms", p95 = "300ms" }`, `ttft = "200ms"`},
	{"", "tokens_per_s = 60", `tokens_per_s = { dist = "uniform", min = 40, max = 20 }`, `tokens_per_s = { dist = "normal", mean = 50, stddev = 10 }`},
	{"", "input_tpm = 1000", "output_tpm = 500"},
}

// eventLines are what a generated event changes.
var eventLines = []string{
	"limit_factor = 0.5", "limit_factor = 1000", "rps = 3", "rpm = \"0.5/s\"", "tpm = 10", "max_concurrent = 2",
	"latency_factor = 2", "error_rate = 0.9", "overload_rate = 0.5", "stall = true", "outage = true",
}

// TestLoadedServicesBuild checks, over generated service tables, the
// promise `validate` makes: a scenario that loads has services (with their
// timed events) that the fake model and the fake server both build from, in
// a virtual run and when served.
func TestLoadedServicesBuild(t *testing.T) {
	loaded := 0
	rapid.Check(t, func(t *rapid.T) {
		var b strings.Builder
		b.WriteString("name = \"gen\"\nduration = \"1m\"\n\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\" } ]\n\n[services.api]\n")
		for i, choices := range serviceLines {
			if line := rapid.SampledFrom(choices).Draw(t, "line"+string(rune('a'+i))); line != "" {
				b.WriteString(line + "\n")
			}
		}
		b.WriteString("\n[tools.t]\nservice = \"api\"\n\n[[strategy]]\nname = \"s\"\n")
		for i := range rapid.IntRange(0, 2).Draw(t, "events") {
			fmt.Fprintf(&b, "\n[[events]]\nservice = \"api\"\nat = %q\nfor = \"15s\"\n", rapid.SampledFrom([]string{"10s", "20s"}).Draw(t, "at"))
			for _, line := range rapid.SliceOfNDistinct(rapid.SampledFrom(eventLines), 1, 2, eventKey).Draw(t, fmt.Sprintf("event%d", i)) {
				b.WriteString(line + "\n")
			}
		}
		sc, err := scenarios.Parse("gen.toml", []byte(b.String()))
		var bad *scenarios.Error
		if errors.As(err, &bad) {
			for _, p := range bad.Problems {
				if p.Line == 0 || !strings.HasPrefix(p.Key, "services.api") && !strings.HasPrefix(p.Key, "events") {
					t.Fatalf("problem %v has no line or is not the service's:\n%s", p, b.String())
				}
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		loaded++
		svc := &sc.Services[0]
		if _, err := fakeapi.NewModel(setup.ScenarioModelConfig(sc, svc), rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Fatalf("loaded, but the model refuses: %v\n%s", err, b.String())
		}
		srv, err := fakeapi.Start(fakeapi.ServerConfig{Services: []fakeapi.ServiceConfig{setup.ServeConfig(sc, svc)}})
		if err != nil {
			t.Fatalf("loaded, but the server refuses: %v\n%s", err, b.String())
		}
		srv.Close()
	})
	if loaded == 0 {
		t.Error("no generated scenario loaded; the test checks nothing")
	}
}

// eventKey is the key an event line sets.
func eventKey(line string) string {
	k, _, _ := strings.Cut(line, " ")
	return k
}
