package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
	"github.com/simbench/simbench/trace"
)

// modelRecords runs sc with a trace and returns its model-call records.
func modelRecords(t *testing.T, sc *scenarios.Scenario) []trace.Record {
	t.Helper()
	var buf bytes.Buffer
	w := trace.NewWriter(&buf)
	if _, err := Run(context.Background(), sc, Options{Trace: w}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var recs []trace.Record
	r := trace.NewReader(&buf, "output.jsonl")
	for r.Next() {
		if rec := r.Record(); rec.Kind == trace.KindModel {
			recs = append(recs, *rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatal("no model calls traced")
	}
	return recs
}

// TestOutputTokensPace checks that a model call's output_tokens are
// generated at the service's tokens_per_s: with constant ttft 200ms,
// tokens_per_s 100 and output_tokens 300 every model attempt takes exactly
// 100ms + 200ms + 300 ÷ 100 s = 3.3s, and still charges all 1000 tokens;
// without output_tokens every token is input and it takes 300ms.
func TestOutputTokensPace(t *testing.T) {
	const gen = "ttft = \"200ms\"\ntokens_per_s = 100\n"
	for _, tt := range []struct {
		llm  string
		want float64 // seconds per attempt
	}{
		{", output_tokens = 300", 0.1 + 0.2 + 300.0/100},
		{"", 0.1 + 0.2},
	} {
		checked := 0
		for _, rec := range modelRecords(t, simtest.OutputScenario(t, gen, tt.llm)) {
			if rec.Outcome != trace.OutcomeSuccess && rec.Outcome != trace.OutcomeCancelled {
				t.Fatalf("llm%q: outcome %s", tt.llm, rec.Outcome)
			}
			if rec.Outcome == trace.OutcomeCancelled { // cut off by the run's end
				continue
			}
			if got := rec.End - rec.Start; math.Abs(got-tt.want) > 1e-9 || rec.Tokens != 1000 {
				t.Fatalf("llm%q: an attempt took %.9fs for %d tokens; want %gs for 1000", tt.llm, got, rec.Tokens, tt.want)
			}
			checked++
		}
		if checked < 10 {
			t.Errorf("llm%q: only %d attempts finished", tt.llm, checked)
		}
	}
}

// TestOutputTokensOTPM checks that output_tpm limits model calls by their
// output_tokens: with output_tpm 600/m (a bucket of 600 tokens refilled at
// 10/s) and 300 output tokens a call, the minute's run admits exactly the
// full bucket's two calls at the start and one more at 30s, when 300
// tokens have come back, and 429s the rest; with every token input, as
// without output_tokens, the limit never bites.
func TestOutputTokensOTPM(t *testing.T) {
	count := func(llm string) (ok, limited int) {
		for _, rec := range modelRecords(t, simtest.OutputScenario(t, "output_tpm = 600\n", llm)) {
			switch rec.Outcome {
			case trace.OutcomeSuccess:
				ok++
			case trace.OutcomeRateLimited:
				limited++
			}
		}
		return ok, limited
	}
	ok, limited := count(", output_tokens = 300")
	if ok != 3 || limited == 0 {
		t.Errorf("with output_tokens: %d calls succeeded and %d were rate limited; want 3 and some", ok, limited)
	}
	free, freeLimited := count("")
	if freeLimited != 0 || free <= 3 {
		t.Errorf("without output_tokens: %d calls succeeded and %d were rate limited; want more than 3 and none", free, freeLimited)
	}
}

// TestOutputTokensDefaultUnchanged checks that output_tokens draws from the
// turn's stream only when set: a built-in scenario whose model calls get an
// output_tokens of constant 0 gives byte-identical results to the scenario
// as written, and one of 500 (on a service generating at 50 tokens/s) does
// not. The scenario digest, which names the conditions, is left out.
func TestOutputTokensDefaultUnchanged(t *testing.T) {
	run := func(output *float64) []byte {
		t.Helper()
		sc, err := scenarios.Builtin("research-agent")
		if err != nil {
			t.Fatal(err)
		}
		if sc.Workload.LLM == nil {
			t.Fatal("research-agent makes no model calls")
		}
		for i := range sc.Services {
			sc.Services[i].Generation.TokensPerSecond = spec.Constant(50.0)
		}
		if output != nil {
			sc.Workload.LLM.Output = spec.Constant(*output)
		}
		res, err := Run(context.Background(), sc, Options{Duration: 2 * time.Minute, Parallel: 1})
		if err != nil {
			t.Fatal(err)
		}
		res.ScenarioDigest = ""
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	zero, some := 0.0, 500.0
	plain := run(nil)
	if on := run(&zero); !bytes.Equal(plain, on) {
		t.Errorf("an output_tokens of 0 changed the results")
	}
	if on := run(&some); bytes.Equal(plain, on) {
		t.Error("an output_tokens of 500 left the results as they were")
	}
}
