package scenarios

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/spec"
)

// TestProblems loads one bad file per class of mistake and checks every
// problem line exactly: file, line, column, key path and message.
func TestProblems(t *testing.T) {
	tests := []struct {
		give string
		want []string
	}{
		{"unknown-key.toml", []string{
			`testdata/unknown-key.toml:11:1: services.s.rpn: unknown key; did you mean "rps" or "rpm" or "rpd"?`,
			`testdata/unknown-key.toml:18:1: strategy[0].max_inflight: unknown key; did you mean "max_in_flight"?`,
		}},
		{"wrong-type.toml", []string{
			`testdata/wrong-type.toml:6:1: workload.sessions: wants a whole number, got string "ten"`,
			`testdata/wrong-type.toml:11:1: services.s.latency: wants a duration string with a unit, like "400ms", got integer 400`,
			`testdata/wrong-type.toml:18:1: strategy[0].token_bucket: wants true or false, got string "yes"`,
		}},
		{"negative-rate.toml", []string{
			`testdata/negative-rate.toml:10:1: services.s.rps: "-10/s" is negative; a rate must be greater than 0`,
			`testdata/negative-rate.toml:11:1: services.s.tpm: is -1000/m; a rate must be greater than 0 (leave the key out for no limit)`,
		}},
		{"p95-below-p50.toml", []string{
			`testdata/p95-below-p50.toml:11:47: services.s.latency.p95: p95 (800ms) is below p50 (1.2s); p95 must be above p50`,
		}},
		{"p95-equals-p50.toml", []string{
			`testdata/p95-equals-p50.toml:11:48: services.api.latency.p95: p95 (100ms) equals p50; a lognormal needs p95 above p50 (for a fixed value, use a constant)`,
		}},
		{"min-above-max.toml", []string{
			`testdata/min-above-max.toml:7:64: workload.calls[0].count.max: max (30) is below min (100); swap them`,
		}},
		{"missing-service.toml", []string{
			`testdata/missing-service.toml:13:1: tools.t.service: unknown service "search-api"; define [services.search-api] or use one of "s"`,
		}},
		{"unknown-dependency.toml", []string{
			`testdata/unknown-dependency.toml:9:37: workload.calls[1].after[0]: unknown dependency "v": no group in this list emits that tool; depend on one of "t", "u" or add a group for it`,
		}},
		{"dependency-cycle.toml", []string{
			`testdata/dependency-cycle.toml:9:41: workload.calls[1].after[0]: dependency cycle read → write → read; calls in a cycle can never start, so remove one of these after entries`,
		}},
		{"duplicate-dependency.toml", []string{
			`testdata/duplicate-dependency.toml:9:49: workload.calls[1].after[1]: "read" is named again (first at after[0]); name each dependency once`,
		}},
		{"bad-gateway.toml", []string{
			`testdata/bad-gateway.toml:15:8: check.gateway.service: is missing; the scenario has 2 services, so name the one the gateway forwards to`,
			`testdata/bad-gateway.toml:16:1: check.gateway.window: is 0s; the window the gateway counts over must be at least 1ms`,
			`testdata/bad-gateway.toml:17:1: check.gateway.max_ratio: is 0.9; a ratio below 1 fails a gateway that keeps its limit exactly`,
			`testdata/bad-gateway.toml:18:10: check.gateway.keys.sk-a: declares no limit; give it rpm, tpm or both`,
			`testdata/bad-gateway.toml:18:34: check.gateway.keys.sk-b.rpm: is -5/m; a rate must be greater than 0 (leave the key out for no limit)`,
			`testdata/bad-gateway.toml:18:46: check.gateway.keys.sk-c: wants a table, got integer 3`,
			`testdata/bad-gateway.toml:18:58: check.gateway.keys.sk-d: declares no limit; give it rpm, tpm or both`,
			`testdata/bad-gateway.toml:18:69: check.gateway.keys.sk-d.rps: unknown key; did you mean "rpm"?`,
		}},
		{"duplicate-strategy.toml", []string{
			`testdata/duplicate-strategy.toml:20:1: strategy[1].name: strategy "bounded" is already defined at line 16; give each strategy a unique name`,
		}},
		{"unknown-enum.toml", []string{
			`testdata/unknown-enum.toml:11:1: services.s.headers: unknown value "opanai"; did you mean "openai"? (one of "none", "openai", "anthropic", "standard")`,
			`testdata/unknown-enum.toml:15:1: tools.t.kind: unknown value "delete"; use one of "read", "write"`,
			`testdata/unknown-enum.toml:19:11: strategy[0].retry.backoff: unknown value "jitter"; use one of "none", "constant", "exponential", "full-jitter", "equal-jitter", "decorrelated-jitter"`,
		}},
		{"syntax-error.toml", []string{
			`testdata/syntax-error.toml:9:2: invalid TOML: expected a comma (',') or array terminator (']'), but got '['`,
		}},
		{"missing-required.toml", []string{
			`testdata/missing-required.toml:1:1: duration: missing; set the virtual time a run covers, like duration = "10m"`,
			`testdata/missing-required.toml:1:1: workload: missing; add a [workload] table saying what the agents do`,
			`testdata/missing-required.toml:1:1: strategy: no strategies; add at least one [[strategy]] table with a name`,
			`testdata/missing-required.toml:7:8: tools.t: missing service; set service = "s" (one of "s")`,
		}},
		{"conflicting.toml", []string{
			`testdata/conflicting.toml:7:1: workload.arrival_rate: set either sessions (closed model) or arrival_rate (open model), not both`,
			`testdata/conflicting.toml:13:1: services.s.burst: only applies to limiter = "token_bucket"; remove it or change the limiter`,
			`testdata/conflicting.toml:20:1: strategy[0].headroom: only applies with token_bucket = true; add that or remove headroom`,
			`testdata/conflicting.toml:21:1: strategy[0].fan_out_mode: only applies with fan_out > 0; add fan_out = N or remove fan_out_mode`,
		}},
		{"ramp.toml", []string{
			`testdata/ramp.toml:7:1: workload.ramp: is 1m0s, not shorter than the run (duration 1m0s), so some sessions would never start; shorten it`,
		}},
		{"open-ramp.toml", []string{
			`testdata/open-ramp.toml:6:1: workload.ramp: "-5s" is negative; durations must be 0 or more`,
			`testdata/open-ramp.toml:6:1: workload.ramp: only applies to the closed model (sessions); in the open model each arrival is one turn, so remove it`,
		}},
		{"empirical.toml", []string{
			`testdata/empirical.toml:14:33: services.broken.latency.file: bad-latencies.txt:2: "slow" is neither a duration (like "120ms" or "1.5s") nor a number of milliseconds; put one value per line`,
			`testdata/empirical.toml:17:1: services.gone.latency: dist = "exponential" needs mean; add mean = …`,
			`testdata/empirical.toml:17:35: services.gone.latency.p50: does not apply to dist = "exponential"; it takes mean, max`,
			`testdata/empirical.toml:17:47: services.gone.latency.file: does not apply to dist = "exponential"; it takes mean, max`,
			`testdata/empirical.toml:26:33: services.lost.latency.file: cannot read "missing.txt": no such file (paths are relative to the scenario file)`,
			`testdata/empirical.toml:29:33: services.outside.latency.file: cannot read "../latencies.txt": give a path relative to the scenario file's directory, without a leading / or ..`,
		}},
		// Every class at once: one error lists them all, in file order.
		{"everything-wrong.toml", []string{
			`testdata/everything-wrong.toml:4:1: sede: unknown key; did you mean "seed"?`,
			`testdata/everything-wrong.toml:8:43: workload.think.p95: p95 (1s) is below p50 (2s); p95 must be above p50`,
			`testdata/everything-wrong.toml:11:51: workload.calls[1].after[1]: unknown dependency "rank": no group in this list emits that tool; depend on one of "fetch", "search" or add a group for it`,
			`testdata/everything-wrong.toml:15:1: services.llm.rpm: is -5/m; a rate must be greater than 0 (leave the key out for no limit)`,
			`testdata/everything-wrong.toml:16:1: services.llm.tpm: "lots" is not a rate; write a count per unit, like "10/s" or "600/m"`,
			`testdata/everything-wrong.toml:17:46: services.llm.latency.max: max (200ms) is below min (900ms); swap them`,
			`testdata/everything-wrong.toml:18:1: services.llm.limiter: unknown value "leaky_bucket"; use one of "token_bucket", "fixed_window", "sliding_window"`,
			`testdata/everything-wrong.toml:21:1: tools.search.service: unknown service "lm"; did you mean "llm"?`,
			`testdata/everything-wrong.toml:25:1: tools.fetch.service: unknown service "nowhere"; define [services.nowhere] or use one of "llm"`,
			`testdata/everything-wrong.toml:29:1: strategy[0].max_in_flight: wants a whole number, got string "8"`,
			`testdata/everything-wrong.toml:32:1: strategy[1].name: strategy "bounded" is already defined at line 28; give each strategy a unique name`,
			`testdata/everything-wrong.toml:33:49: strategy[1].retry.cap: cap (500ms) is below base (1s); raise cap or lower base`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			sc, err := Load(filepath.Join("testdata", tt.give))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Load = %v, %v; want an *Error", sc, err)
			}
			got := strings.Split(e.Error(), "\n")
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestProblemFields(t *testing.T) {
	_, err := Load("testdata/p95-below-p50.toml")
	var e *Error
	if !errors.As(err, &e) || len(e.Problems) != 1 {
		t.Fatalf("Load = %v; want one problem", err)
	}
	want := Problem{
		File: "testdata/p95-below-p50.toml", Line: 11, Col: 47, Key: "services.s.latency.p95",
		Message: "p95 (800ms) is below p50 (1.2s); p95 must be above p50",
	}
	if e.Problems[0] != want {
		t.Errorf("problem = %+v, want %+v", e.Problems[0], want)
	}
}

// TestFullFile decodes the files that set every key (full.toml, and
// full-open.toml for the open model) and checks each value, including the
// defaults filled into the strategy that sets none.
func TestFullFile(t *testing.T) {
	sc, err := Load("testdata/full.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Scenario{
		Name: "full", Description: "every key", Source: "testdata/full.toml", Seed: 9, Duration: 90 * time.Second, Objective: ObjectiveCost,
		Workload: Workload{
			Sessions: 12, Turns: 3,
			Think:     spec.Dist[time.Duration]{Kind: spec.DistNormal, Mean: 2 * time.Second, Stddev: 500 * time.Millisecond, Max: 5 * time.Second},
			Ramp:      6 * time.Second,
			Processes: 6, ProcessShares: []float64{3, 2, 1, 1, 1, 1},
			Classes: []SessionClass{{"interactive", 3}, {"batch", 9}},
			LLM:     &LLMCall{Service: "llm", Tokens: spec.Dist[float64]{Kind: spec.DistLognormal, P50: 1500, P95: 4000}, Output: spec.Constant(300.0), Success: 0.9, Retries: 2, ContextGrowth: 500},
			Calls: []CallGroup{
				{Tool: "search", Count: spec.Constant(4.0), Probability: 1},
				{
					Mix:   []Weighted{{"fetch", 3}, {"write_note", 1}},
					Count: spec.Dist[float64]{Kind: spec.DistUniform, Min: 1, Max: 5}, Probability: 0.5, After: []string{"search"},
				},
			},
			Subagents: &Subagents{
				Count: spec.Constant(2.0), MaxIterations: 6, TokenBudget: 30000, OrchestratorBudget: 100_000, FinishProbability: 0.2,
				LLM:   &LLMCall{Service: "llm", Tokens: spec.Constant(2000.0), Output: spec.Dist[float64]{Kind: spec.DistUniform, Min: 100, Max: 600}, ContextGrowth: 250},
				Calls: []CallGroup{{Tool: "search", Count: spec.Dist[float64]{Kind: spec.DistExponential, Mean: 3}, Probability: 1}},
			},
			Cancel: Cancel{
				Probability:   0.1,
				After:         spec.Dist[time.Duration]{Kind: spec.DistPareto, Min: time.Second, Alpha: 1.5, Max: 20 * time.Second},
				ParentTimeout: 30 * time.Second,
			},
		},
		Services: []Service{
			{
				Name: "llm", RequestsPerSecond: 500.5, RequestsPerMinute: 36000, TokensPerMinute: 2e6,
				MaxConcurrent: 64, Limiter: spec.TokenBucket, Burst: 50, CountRejected: true, DedupeWrites: true,
				Latency: spec.Dist[time.Duration]{
					Kind: spec.DistEmpirical, File: "latencies.txt",
					Samples: []time.Duration{412 * time.Millisecond, 380 * time.Millisecond, 1200 * time.Millisecond, 950 * time.Millisecond},
				},
				Load: spec.Load{Knee: 32, Factor: 0.02},
				Faults: spec.Faults{
					ErrorRate: 0.01, HangRate: 0.002, ResetRate: 0.003,
					SlowFirstByte:  spec.SlowFirstByte{Rate: 0.05, Delay: 2 * time.Second},
					Overload:       spec.Overload{Every: 5 * time.Minute, Length: 20 * time.Second, Rate: 0.5},
					Conflict:       1,
					Credit:         50_000_000_000,
					ContextWindow:  128_000,
					RetryDelayBody: spec.RetryDelayBesides,
				},
				Headers: spec.HeadersAnthropic, API: spec.APIAnthropic, Lying: spec.LieShort, Keys: []string{"team-a", "team-b"},
				KeyLimits:    map[string]spec.Key{"team-b": {Key: "team-b", Project: "research", RPS: 100, RPM: 6000, TPM: 100_000, MaxConcurrent: 8}},
				Projects:     []spec.Project{{Name: "research", RPS: 200, RPM: 12_000, TPM: 1_000_000, MaxConcurrent: 16}},
				Background:   spec.Background{Rate: 20, Tokens: 500, Burst: 4},
				NetworkDelay: spec.Dist[time.Duration]{Kind: spec.DistUniform, Min: 2 * time.Millisecond, Max: 30 * time.Millisecond},
				Generation: spec.Generation{
					TTFT:            spec.Dist[time.Duration]{Kind: spec.DistLognormal, P50: 300 * time.Millisecond, P95: 900 * time.Millisecond},
					TokensPerSecond: spec.Dist[float64]{Kind: spec.DistUniform, Min: 40, Max: 80},
				},
				InputTokensPerMinute: 1_500_000, OutputTokensPerMinute: 300_000,
				PricePer1kInput: 0.003, PricePer1kOutput: 0.015,
				Daily: spec.Daily{RPD: 1_000_000, TPD: 500_000_000, Reset: "00:00", Zone: "America/Los_Angeles", Start: "2025-06-01T23:58:30"},
			},
			{
				Name: "tools", RequestsPerSecond: 20, Limiter: spec.SlidingWindow,
				Latency: spec.Constant(150 * time.Millisecond), Headers: spec.HeadersNone,
				// Left out of the file: the default.
				NetworkDelay: spec.Dist[time.Duration]{Kind: spec.DistLognormal, P50: time.Millisecond, P95: 5 * time.Millisecond},
			},
		},
		Routes: []Route{{Name: "lookup", Deployments: []string{"tools", "llm"}, Policy: sched.RouteOrdered, FallBackAfter: 5 * time.Second, CooldownAfter: 3, Cooldown: 30 * time.Second}},
		Tools: []Tool{
			{Name: "search", Service: "tools", Tokens: spec.Constant(0.0), Kind: KindRead},
			{Name: "fetch", Service: "tools", Tokens: spec.Constant(250.0), Kind: KindRead},
			{Name: "write_note", Service: "tools", Tokens: spec.Constant(0.0), Kind: KindWrite, Resource: "notes", Idempotent: true, ResourceFrom: spec.ResourceFrom{Kind: spec.ResourceJSON, Name: "note_id"}},
		},
		Strategies: []Strategy{
			{
				Name: "defaults", Headroom: 1, Retry: Retry{Backoff: sched.BackoffNone, HonorRetryAfter: true, OverMaxRetryAfter: sched.RetryAfterClamp},
				SerializeWrites: true, FanOutMode: sched.FanOutBatch, Join: sched.JoinPartial, CancelAt: CancelAtTransport,
				Quota: Quota{Mode: QuotaFull},
			},
			{
				Name: "everything", Description: "every knob", MaxInFlight: 16, BatchTurns: 2,
				ProgressiveJoin:       &ProgressiveJoin{Share: 0.75, Late: JoinLateDrop},
				MaxInFlightPerService: map[string]int{"llm": 8, "tools": 12},
				TokenBucket:           true, Headroom: 0.8,
				Retry: Retry{
					Backoff: sched.BackoffDecorrelatedJitter, Base: 250 * time.Millisecond, Cap: 30 * time.Second,
					Attempts: 7, Budget: 2 * time.Minute, HonorRetryAfter: true, RetryAfterJitter: 500 * time.Millisecond,
					MaxRetryAfter: time.Minute, OverMaxRetryAfter: sched.RetryAfterFail,
				},
				SerializeWrites: false, KeepSlotDuringBackoff: true, PauseOnRetryAfter: true, Recommend: true,
				FanOut: 6, FanOutMode: sched.FanOutTruncate, Join: sched.JoinAllOrNothing,
				AttemptTimeout: 5 * time.Second, CallTimeout: 20 * time.Second, TurnTimeout: time.Minute, FallBackAfter: new(sched.NoFallBack),
				TokenBudget: 50000, AttemptBudget: 40, MaxQueued: 1000, CancelAt: CancelAtReader,
				Quota: Quota{Mode: QuotaShared, RTT: 2 * time.Millisecond, Lease: 250 * time.Millisecond, LeaseMax: 0.5,
					Timeout: 20 * time.Millisecond, ProbeEvery: 500 * time.Millisecond, Fallback: FallbackClosed, OutageAt: 30 * time.Second, OutageFor: 10 * time.Second, Outage: OutageHung},
				Adaptive: &Adaptive{
					Algorithm: sched.AlgorithmGradient, Initial: 4, Min: 2, Max: 12, Decrease: 0.7,
					Smoothing: 0.3, Tolerance: 2, LongWindow: 100, QueueSize: 3, Services: []string{"llm"},
				},
				RetryBudget: &RetryBudget{Ratio: 0.1, MinPerSecond: 1, Max: 20},
				HeaderSync:  true,
				Priority:    []Priority{{Class: "interactive"}, {Class: "batch", Share: 0.25}},
			},
		},
		Thresholds: []Threshold{
			{Metric: "answer_p95", Op: "<", Value: 5, Source: fullLine(t, `answer_p95 =`, "thresholds.answer_p95"), durationValue: true},
			{Metric: "answered_share", Op: ">=", Value: 0.99, Source: fullLine(t, `answered_share =`, "thresholds.answered_share")},
			{Strategy: "everything", Metric: "rate_limited_share", Op: "<=", Value: 0.01, Source: fullLine(t, `rate_limited_share =`, "thresholds.everything.rate_limited_share")},
		},
		Events: []Event{
			{Service: "llm", At: 10 * time.Second, For: 20 * time.Second, LimitFactor: 0.5, LatencyFactor: 2,
				ErrorRate: 0.2, HasErrorRate: true, OverloadRate: 0.1, HasOverloadRate: true},
			{Service: "tools", At: 10 * time.Second, For: 5 * time.Second, RequestsPerSecond: 10, RequestsPerMinute: 300,
				TokensPerMinute: 50_000, MaxConcurrent: 4},
			{Service: "tools", At: 30 * time.Second, For: time.Second, Stall: true},
			{Service: "tools", At: 40 * time.Second, For: 5 * time.Second, Outage: true},
		},
		Check: Check{
			MaxInFlight: map[string]int{"tools": 8}, RateLimitedWarn: 0.02, RateLimitedFail: 0.2,
			EarlyRetries: 1, HasEarlyRetries: true, JitterWindow: 50 * time.Millisecond, JitterMinSpread: 30 * time.Millisecond,
			JitterMinShare: 0.2, AttemptsWarn: 4, AttemptsFail: 8, Abandoned: 2, HasAbandoned: true, NonRetryable: 1, HasNonRetryable: true,
			AnswerGapWarn: 20 * time.Second, AnswerGapFail: time.Minute,
			Gateway: &Gateway{Service: "llm", Window: 10 * time.Second, MaxRatio: 1.1,
				Keys: []GatewayKey{{Key: "sk-team-a", RPM: 600, TPM: 60_000}}},
		},
	}
	if !reflect.DeepEqual(sc, want) {
		t.Errorf("decoded:\n%#v\nwant:\n%#v", sc, want)
	}
	if got := sc.Tool("write_note"); got == nil || got.Resource != "notes" {
		t.Errorf("Tool(write_note) = %+v", got)
	}
	if sc.Service("nope") != nil || sc.Strategy("everything") == nil {
		t.Error("lookups by name disagree with the file")
	}

	// The open model's keys cannot share a workload with sessions.
	open, err := Load("testdata/full-open.toml")
	if err != nil {
		t.Fatal(err)
	}
	wantWorkload := Workload{
		Arrival: ArrivalConstant, ArrivalRate: 0.5, Think: spec.Constant(time.Duration(0)), Processes: 1,
		Calls: []CallGroup{{Tool: "t", Count: spec.Constant(1.0), Probability: 1}},
	}
	if !reflect.DeepEqual(open.Workload, wantWorkload) {
		t.Errorf("full-open workload:\n%#v\nwant:\n%#v", open.Workload, wantWorkload)
	}
	if j := open.Strategies[0].ProgressiveJoin; j == nil || *j != (ProgressiveJoin{First: 1, Late: JoinLateFold}) {
		t.Errorf("full-open progressive_join = %+v; want first = 1, late fold", j)
	}
}

func TestEmpiricalSamples(t *testing.T) {
	sc, err := Parse("testdata/empirical-ok.toml", []byte(`
duration = "1m"
[workload]
sessions = 1
calls = [ { tool = "t" } ]
[services.s]
latency = { dist = "empirical", file = "latencies.txt" }
[tools.t]
service = "s"
[[strategy]]
name = "a"
`))
	if err != nil {
		t.Fatal(err)
	}
	// latencies.txt: 412ms, a comment, a blank line, 380ms, 1.2s, and 950 (milliseconds).
	want := []time.Duration{412 * time.Millisecond, 380 * time.Millisecond, 1200 * time.Millisecond, 950 * time.Millisecond}
	if got := sc.Services[0].Latency.Samples; !reflect.DeepEqual(got, want) {
		t.Errorf("samples = %v, want %v", got, want)
	}
	if sc.Name != "empirical-ok" {
		t.Errorf("name = %q, want the file's base name", sc.Name)
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		give    string
		want    float64 // per second
		wantErr string
	}{
		{give: "10/s", want: 10},
		{give: "600/m", want: 10},
		{give: "600/min", want: 10},
		{give: "36000/h", want: 10},
		{give: "10_000/m", want: 10000.0 / 60},
		{give: " 2.5 / second ", want: 2.5},
		{give: "0/s", want: 0},
		{give: "10", wantErr: `"10" is not a rate; write a count per unit, like "10/s" or "600/m"`},
		{give: "10/d", wantErr: `"10/d" has an unknown unit "d"; use /s, /m or /h`},
		{give: "ten/s", wantErr: `"ten/s" does not start with a number; write a count per unit, like "10/s"`},
		{give: "-1/s", wantErr: `"-1/s" is negative; a rate must be greater than 0`},
		{give: "1e400/s", wantErr: `"1e400/s" is out of range: its count is too large for any rate; write a count per unit, like "10/s"`},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.give)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseRate(%q) error = %v, want %q", tt.give, err, tt.wantErr)
			}
			continue
		}
		if err != nil || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tt.give, got, err, tt.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		give    string
		want    time.Duration
		wantErr string
	}{
		{give: "400ms", want: 400 * time.Millisecond},
		{give: "10m", want: 10 * time.Minute},
		{give: "1h30m", want: 90 * time.Minute},
		{give: "0s", want: 0},
		{give: "400", wantErr: `"400" is not a duration; write a number with a unit, like "400ms" or "10m"`},
		{give: "soon", wantErr: `"soon" is not a duration; write a number with a unit, like "400ms" or "10m"`},
		{give: "-1s", wantErr: `"-1s" is negative; durations must be 0 or more`},
	}
	for _, tt := range tests {
		got, err := parseDuration(tt.give)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("parseDuration(%q) error = %v, want %q", tt.give, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", tt.give, got, err, tt.want)
		}
	}
}

// TestRateKeys checks that the key, not the string's unit, sets the unit
// a rate is stored in.
func TestRateKeys(t *testing.T) {
	sc, err := Parse("rates.toml", []byte(`
duration = "1m"
[workload]
arrival_rate = "120/m"
calls = [ { tool = "t" } ]
[services.s]
rps = "60/m"
rpm = "2/s"
tpm = 1_000
[tools.t]
service = "s"
[[strategy]]
name = "a"
`))
	if err != nil {
		t.Fatal(err)
	}
	s := sc.Services[0]
	if s.RequestsPerSecond != 1 || s.RequestsPerMinute != 120 || s.TokensPerMinute != 1000 {
		t.Errorf("rps, rpm, tpm = %v, %v, %v; want 1, 120, 1000", s.RequestsPerSecond, s.RequestsPerMinute, s.TokensPerMinute)
	}
	if w := sc.Workload; w.ArrivalRate != 2 || w.Arrival != ArrivalPoisson || w.Sessions != 0 {
		t.Errorf("open model = %v at %v/s with %d sessions; want poisson at 2/s", w.Arrival, w.ArrivalRate, w.Sessions)
	}
}

// TestPositions checks the key index on the shapes TOML allows: dotted
// keys, quoted keys, inline tables over several lines, arrays of tables
// and of inline tables, and strings holding brackets and #.
func TestPositions(t *testing.T) {
	src := `a = "[not.a.table] # nor a comment"
b.c = 1
"quoted key".d = 'x'
e = { f = 1,
      g = [ 1, { h = 2 } ] }   # comment
s = """
[fake]
"""

[[t]]
i = 1
[t.sub]
j = 2

[[t]]
  k = [
    { l = 3 },
    { m = 4 },
  ]
`
	want := map[string]pos{
		"a":                  {1, 1},
		"b":                  {2, 1},
		"b.c":                {2, 3},
		`"quoted key"`:       {3, 1},
		`"quoted key".d`:     {3, 14},
		"e.f":                {4, 7},
		"e.g":                {5, 7},
		"e.g[1]":             {5, 16},
		"e.g[1].h":           {5, 18},
		"s":                  {6, 1},
		"t[0]":               {10, 3},
		"t[0].i":             {11, 1},
		"t[0].sub":           {12, 4},
		"t[0].sub.j":         {13, 1},
		"t[1]":               {15, 3},
		"t[1].k[1].m":        {18, 7},
		"t[1].k[0]":          {17, 5},
		"fake":               {0, 0},  // inside a string: absent
		"t[1].k[1].m.absent": {18, 7}, // lookup falls back to the nearest ancestor
	}
	idx := indexPositions([]byte(src))
	for key, at := range want {
		n, ok := idx.find(key)
		var got pos
		if ok {
			got = idx.lines.at(n.off)
		}
		switch {
		case key == "fake":
			if ok {
				t.Errorf("%s indexed at %v; it is inside a string", key, got)
			}
		case strings.HasSuffix(key, ".absent"):
			if got := idx.lookup(key); got != at {
				t.Errorf("lookup(%s) = %v, want %v", key, got, at)
			}
		case got != at:
			t.Errorf("%s at %v, want %v", key, got, at)
		}
	}
}

func TestBuiltins(t *testing.T) {
	list := List()
	if len(list) != 17 {
		t.Errorf("List() has %d scenarios, want the 8 of issue 4, contention, shared-headers and limit-drop (issue 13), shared-key (issue 14), nested-retries (issue 24), priority, narrow-vs-wide and hedging (issue 25), fallback (issue 43): %v", len(list), list)
	}
	for _, info := range list {
		t.Run(info.Name, func(t *testing.T) {
			sc, err := Builtin(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Name != info.Name {
				t.Errorf("name key %q differs from the file name %q", sc.Name, info.Name)
			}
			if info.Description == "" || info.Description != sc.Description {
				t.Errorf("List description %q, file description %q", info.Description, sc.Description)
			}
			if sc.Source != "builtin:"+info.Name+".toml" {
				t.Errorf("Source = %q", sc.Source)
			}
			data, err := builtin.ReadFile(info.Name + ".toml")
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			if !strings.HasPrefix(text, "# "+info.Name+" — ") {
				t.Errorf("file does not open with a comment naming it: %.40q", text)
			}
			for _, part := range []string{"What it shows", "What to look at"} {
				if !strings.Contains(text, "# "+part) {
					t.Errorf("opening comment lacks %q", part)
				}
			}
		})
	}
}

// TestTier3Size keeps the worked example small enough for a quick run: its
// successful calls cannot exceed the binding limit over the duration.
func TestTier3Size(t *testing.T) {
	sc, err := Builtin("tier3.toml")
	if err != nil {
		t.Fatal(err)
	}
	svc := sc.Service("openai")
	if svc == nil || svc.RequestsPerMinute != 10000 || svc.TokensPerMinute != 10e6 {
		t.Fatalf("openai service = %+v; want 10,000 RPM and 10M TPM", svc)
	}
	maxCalls := svc.RequestsPerMinute * sc.Duration.Minutes()
	if maxCalls > 300_000 {
		t.Errorf("tier3 admits up to %v calls; keep it to a few hundred thousand", maxCalls)
	}
	if sc.Duration != 10*time.Minute || len(sc.Strategies) < 3 {
		t.Errorf("duration %v, %d strategies; want 10m and sequential, unbounded, bounded", sc.Duration, len(sc.Strategies))
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // away from the package's own tier3.toml
	data, err := builtin.ReadFile("burst-8.toml")
	if err != nil {
		t.Fatal(err)
	}
	// A file on disk is taken over the built-in of the same name.
	path := filepath.Join("sub", "tier3.toml")
	if err := os.Mkdir("sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		give       string
		wantSource string
	}{
		{give: "tier3", wantSource: "builtin:tier3.toml"},
		{give: "tier3.toml", wantSource: "builtin:tier3.toml"},
		{give: path, wantSource: path},
	}
	for _, tt := range tests {
		sc, err := Open(tt.give)
		if err != nil || sc.Source != tt.wantSource {
			t.Errorf("Open(%q) = %v, %v; want source %q", tt.give, sc, err, tt.wantSource)
		}
	}
	_, err = Open("tier4")
	want := `scenarios: "tier4" is neither a file nor a built-in scenario; the built-ins are burst-8, cancel, contention, fallback, hallucinated-fanout, hedging, limit-drop, mixed-read-write, multi-agent, narrow-vs-wide, nested-retries, priority, research-agent, retry-after-herd, shared-headers, shared-key, tier3`
	if err == nil || err.Error() != want {
		t.Errorf("Open(tier4) error = %v\nwant %s", err, want)
	}
	if _, err := Builtin("../scenarios/tier3"); err == nil {
		t.Error("Builtin accepted a path")
	}
}

// Empty tables and arrays are as good as missing, and a rate must be a
// finite number.
func TestEmptySectionsAndNonFiniteRates(t *testing.T) {
	const base = `
name = "x"
duration = "1m"
[workload]
sessions = 1
calls = [ { tool = "t", count = 1 } ]
[tools.t]
service = "s"
`
	tests := []struct {
		name, toml, want string
	}{
		{"no strategies", "strategy = []\n" + base + "[services.s]\nrps = 1\n", "strategy: no strategies"},
		{"no services", "services = {}\n" + base + "[[strategy]]\nname = \"a\"\n", "services: no services"},
		{"infinite rate", base + "[services.s]\nrps = \"inf/s\"\n[[strategy]]\nname = \"a\"\n", `services.s.rps: "inf/s" is not a finite number`},
		{"NaN rate", base + "[services.s]\nrpm = \"NaN/m\"\n[[strategy]]\nname = \"a\"\n", `services.s.rpm: "NaN/m" is not a finite number`},
		{"overload rejecting nothing", base + "[services.s]\nrps = 1\nfaults = { overload = { every = \"1m\", length = \"5s\", rate = 0 } }\n[[strategy]]\nname = \"a\"\n", `services.s.faults.overload.rate: is 0, so an episode would reject nothing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.toml", []byte(tt.toml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLyingNoneIsTheTruth(t *testing.T) {
	sc, err := Parse("x.toml", []byte(`
name = "x"
duration = "1m"
[workload]
sessions = 1
calls = [ { tool = "t", count = 1 } ]
[services.s]
rps = 1
headers = "openai"
lying = "none"
[tools.t]
service = "s"
[[strategy]]
name = "a"
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Services[0].Lying; got != spec.LieNone {
		t.Errorf("lying = %q, want LyingNone", got)
	}
}

func TestOneStrategyMarkedForRecommend(t *testing.T) {
	src := `
duration = "1m"
[workload]
sessions = 1
calls = [ { tool = "t" } ]
[services.s]
rpm = 60
[tools.t]
service = "s"
[[strategy]]
name = "a"
recommend = true
[[strategy]]
name = "b"
max_in_flight = 2
recommend = true
`
	_, err := Parse("mark.toml", []byte(src))
	want := `mark.toml:16:1: strategy[1].recommend: strategy "a" (line 11) is already the one recommend tunes; mark only one strategy`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
	sc, err := Parse("mark.toml", []byte(strings.Replace(src, "recommend = true\n[[strategy]]", "[[strategy]]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Strategies[0].Recommend || !sc.Strategies[1].Recommend {
		t.Errorf("marks = %v, %v; want b marked", sc.Strategies[0].Recommend, sc.Strategies[1].Recommend)
	}
}

// TestAdaptiveProblems checks the adaptive table's own rules.
func TestAdaptiveProblems(t *testing.T) {
	const head = "name = \"a\"\nduration = \"1m\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\", count = 1 } ]\n[services.s]\nrpm = 60\n[tools.t]\nservice = \"s\"\n[[strategy]]\nname = \"x\"\n"
	for _, tc := range []struct{ line, want string }{
		{`adaptive = { initial = 4 }`, "algorithm: is required"},
		{`adaptive = { algorithm = "aimd", min = 9, max = 3 }`, "min: is 9, above max (3)"},
		{`adaptive = { algorithm = "aimd", tolerance = 2 }`, `tolerance: only applies with algorithm = "gradient"`},
		{`adaptive = { algorithm = "gradient", decrease = 1 }`, "decrease: is 1; it multiplies the limit"},
		{`adaptive = { algorithm = "gradient", services = ["q"] }`, `unknown service "q"`},
		{`adaptive = { algorithm = "vegas" }`, `unknown value "vegas"`},
	} {
		_, err := Parse("a.toml", []byte(head+tc.line+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to say %q", tc.line, err, tc.want)
		}
	}
	sc, err := Parse("a.toml", []byte(head+`adaptive = { algorithm = "aimd", initial = 4 }`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := sc.Strategies[0].Adaptive; a == nil || a.Algorithm != sched.AlgorithmAIMD || a.Initial != 4 || a.Services != nil {
		t.Fatalf("decoded %+v", a)
	}
}

// TestBudgetSyncBackgroundProblems checks the rules of retry_budget,
// header_sync and background, all reported at once with their lines.
func TestBudgetSyncBackgroundProblems(t *testing.T) {
	const src = `name = "a"
duration = "1m"
[workload]
sessions = 1
calls = [ { tool = "t", count = 1 } ]
[services.s]
rpm = 60
background = { tokens = 5 }
[services.u]
background = { rate = "20000/s", tokens = -1 }
[tools.t]
service = "s"
[[strategy]]
name = "x"
header_sync = true
retry_budget = { max = 5 }
[[strategy]]
name = "y"
token_bucket = true
retry_budget = { ratio = -0.5, max = 0.5, every = 3 }
`
	_, err := Parse("b.toml", []byte(src))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`b.toml:8:`, `services.s.background: missing rate`,
		`b.toml:10:`, `services.u.background.rate: is 20000`, `services.u.background.tokens: is -1`,
		`b.toml:15:1: strategy[0].header_sync: lowers the token buckets, so it only applies with token_bucket = true`,
		`strategy[0].retry_budget: needs ratio or min_per_s`,
		`b.toml:20:`, `strategy[1].retry_budget.ratio: is -0.5`, `strategy[1].retry_budget.max: is 0.5`, `strategy[1].retry_budget.every`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	ok := strings.NewReplacer("background = { tokens = 5 }", `background = { rate = "20/s" }`,
		`background = { rate = "20000/s", tokens = -1 }`, "",
		"header_sync = true\nretry_budget = { max = 5 }", "retry_budget = { min_per_s = 2 }",
		"retry_budget = { ratio = -0.5, max = 0.5, every = 3 }", "header_sync = true\nretry_budget = { ratio = 0.1 }").Replace(src)
	sc, err := Parse("b.toml", []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if b := sc.Services[0].Background; b != (spec.Background{Rate: 20}) {
		t.Errorf("background %+v", b)
	}
	if x, y := sc.Strategies[0], sc.Strategies[1]; x.HeaderSync || *x.RetryBudget != (RetryBudget{MinPerSecond: 2}) || !y.HeaderSync || *y.RetryBudget != (RetryBudget{Ratio: 0.1}) {
		t.Errorf("strategies: x %v %+v, y %v %+v", x.HeaderSync, x.RetryBudget, y.HeaderSync, y.RetryBudget)
	}
}

// fullLine returns the position "testdata/full.toml:N: key" of the first
// line of full.toml that starts with prefix, so that the expected sources
// follow the file as keys are added to it.
func fullLine(t *testing.T, prefix, key string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/full.toml")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, prefix) {
			return fmt.Sprintf("testdata/full.toml:%d: %s", i+1, key)
		}
	}
	t.Fatalf("full.toml has no line starting with %q", prefix)
	return ""
}
