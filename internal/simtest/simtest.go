// Package simtest builds the small scenarios the tests of the engines
// share (sim's and live's), and reads back what a run traced. Only tests
// import it.
package simtest

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/spec"
	"github.com/simbench/simbench/trace"
)

// Queue builds an open-model scenario of single-call turns: Poisson arrivals
// at rate per second, one service with the given latency, and one strategy
// with cap c and no rate limits.
func Queue(rate float64, latency spec.Dist[time.Duration], c int, calls int) *scenarios.Scenario {
	return &scenarios.Scenario{
		Name: "Queue", Seed: 1, Duration: time.Duration(float64(calls) / rate * float64(time.Second)),
		Workload: scenarios.Workload{
			Arrival: scenarios.ArrivalPoisson, ArrivalRate: rate,
			Calls: []scenarios.CallGroup{{Tool: "t", Count: spec.Constant(1.0), Probability: 1}},
		},
		Services:   []scenarios.Service{{Name: "s", Latency: latency, Headers: spec.HeadersOpenAI}},
		Tools:      []scenarios.Tool{{Name: "t", Service: "s", Tokens: spec.Constant(0.0), Kind: scenarios.KindRead}},
		Strategies: []scenarios.Strategy{{Name: "cap", MaxInFlight: c, SerializeWrites: true, Retry: scenarios.Retry{HonorRetryAfter: true}}},
	}
}

// AIMDQueue is one session whose single turn makes calls calls to a
// service with no limits and a constant latency, run by an AIMD strategy
// that starts at one attempt in flight and may grow to max.
func AIMDQueue(latency time.Duration, calls, max int) *scenarios.Scenario {
	sc := Queue(1, spec.Constant(latency), 0, 1)
	sc.Duration = time.Minute
	sc.Workload.Arrival, sc.Workload.ArrivalRate = "", 0
	sc.Workload.Sessions, sc.Workload.Turns = 1, 1
	sc.Workload.Calls[0].Count = spec.Constant(float64(calls))
	sc.Strategies[0].Name = "aimd"
	sc.Strategies[0].Adaptive = &scenarios.Adaptive{Algorithm: sched.AlgorithmAIMD, Initial: 1, Min: 1, Max: max}
	return sc
}

// JoinScenario is one session of three turns, each a 100 ms model call
// then three tool calls answering in 100 ms, 300 ms and 2 s, with no
// think time; join is the strategy's progressive_join ("" for none).
func JoinScenario(t *testing.T, join string) *scenarios.Scenario {
	t.Helper()
	if join != "" {
		join = "progressive_join = " + join
	}
	src := fmt.Sprintf(`
name = "join"
duration = "1h"
[workload]
sessions = 1
turns = 3
llm = { service = "model", tokens = 1000 }
calls = [ { tool = "fast", count = 1 }, { tool = "mid", count = 1 }, { tool = "slow", count = 1 } ]
[services.model]
latency = "100ms"
network_delay = "0s"
price_per_1k_input = 1
[services.fast]
latency = "100ms"
network_delay = "0s"
[services.mid]
latency = "300ms"
network_delay = "0s"
[services.slow]
latency = "2s"
network_delay = "0s"
price_per_1k_input = 1
[tools.fast]
service = "fast"
tokens = 10
[tools.mid]
service = "mid"
tokens = 10
[tools.slow]
service = "slow"
tokens = 10
[[strategy]]
name = "s"
max_in_flight = 16
%s
`, join)
	sc, err := scenarios.Parse("join.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// OutputScenario is a workload of model calls only, of 1000 tokens each,
// to a service m whose extra keys are svc; llm adds keys to the model call.
func OutputScenario(t *testing.T, svc, llm string) *scenarios.Scenario {
	t.Helper()
	src := `name = "output"
duration = "60s"
[workload]
sessions = 4
turns = 1000
think = "1s"
llm = { service = "m", tokens = 1000` + llm + ` }
[services.m]
latency = "100ms"
network_delay = "0s"
` + svc + `
[[strategy]]
name = "plain"
`
	sc, err := scenarios.Parse("output.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// MustParse parses the scenario file text toml, failing the test on an
// error.
func MustParse(t *testing.T, toml string) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Parse("test.toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TracedRecords reads back the attempts a trace writer wrote into buf.
func TracedRecords(t *testing.T, w *trace.Writer, buf *bytes.Buffer) []trace.Record {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var recs []trace.Record
	r := trace.NewReader(buf, "trace.jsonl")
	for r.Next() {
		recs = append(recs, *r.Record())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// ConstLatency is the distribution that is always d.
func ConstLatency(d time.Duration) spec.Dist[time.Duration] {
	return spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: d}
}

// Closed is a closed-model scenario of sessions agents making turns of one
// call each to a service answering in 10 ms.
func Closed(sessions, turns int) *scenarios.Scenario {
	sc := Queue(1, ConstLatency(10*time.Millisecond), 4, 10)
	sc.Duration = 10 * time.Second
	sc.Workload.Arrival, sc.Workload.ArrivalRate = "", 0
	sc.Workload.Sessions, sc.Workload.Turns = sessions, turns
	return sc
}

// TasksScenario is sessions sessions of turns turns each, a model call of
// 1000 tokens (200 output) then one 50-token tool call a turn, on one
// service; extra is appended to the workload's llm table.
func TasksScenario(t *testing.T, seed uint64, sessions, turns int, llm, extra string) *scenarios.Scenario {
	t.Helper()
	src := fmt.Sprintf(`
name = "tasks"
seed = %d
duration = "2h"
[workload]
sessions = %d
turns = %d
llm = { service = "model", tokens = 1000, output_tokens = 200%s }
calls = [ { tool = "fetch", count = 1 } ]
[services.model]
latency = "100ms"
network_delay = "0s"
%s
[services.api]
latency = "50ms"
network_delay = "0s"
[tools.fetch]
service = "api"
tokens = 50
[[strategy]]
name = "bounded-4"
max_in_flight = 4
`, seed, sessions, turns, llm, extra)
	sc, err := scenarios.Parse("tasks.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
