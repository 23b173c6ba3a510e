package scenarios

import (
	"strings"
	"testing"

	"github.com/simbench/simbench/spec"
)

// TestOutputTokens checks what workload.llm.output_tokens and
// workload.subagents.llm.output_tokens become, that leaving them out sets
// nothing, and that an output larger than tokens is reported at each key,
// all at once.
func TestOutputTokens(t *testing.T) {
	const head = "name = \"a\"\nduration = \"1m\"\n[services.s]\nrpm = 60\n[[strategy]]\nname = \"x\"\n[workload]\nsessions = 1\n"
	sc, err := Parse("a.toml", []byte(head+"llm = { service = \"s\", tokens = 1000, output_tokens = 200 }\n"+
		"[workload.subagents]\ncount = 1\nmax_iterations = 1\nllm = { service = \"s\", tokens = { dist = \"uniform\", min = 500, max = 900 }, output_tokens = { dist = \"uniform\", min = 10, max = 90 } }\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l := sc.Workload.LLM; l.Output.Kind != spec.DistConstant || l.Output.Value != 200 || l.Tokens.Value != 1000 {
		t.Errorf("workload.llm = %+v", l)
	}
	if l := sc.Workload.Subagents.LLM; l.Output.Kind != spec.DistUniform || l.Output.Min != 10 || l.Output.Max != 90 {
		t.Errorf("workload.subagents.llm = %+v", l)
	}
	sc, err = Parse("a.toml", []byte(head+"llm = { service = \"s\", tokens = 1000 }\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l := sc.Workload.LLM; l.Output.Kind != "" {
		t.Errorf("without output_tokens: %+v", l)
	}
	_, err = Parse("a.toml", []byte(head+"llm = { service = \"s\", tokens = 100, output_tokens = 101 }\n"+
		"[workload.subagents]\ncount = 1\nmax_iterations = 1\nllm = { service = \"s\", output_tokens = -1 }\n"))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"a.toml:9:",
		"workload.llm.output_tokens: reaches 101, more than tokens (100)",
		"workload.subagents.llm.output_tokens:",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nwant it to say %q", err, want)
		}
	}
}
