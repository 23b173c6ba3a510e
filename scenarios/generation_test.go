package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

// TestGenerationKeys checks what ttft, tokens_per_s, input_tpm and
// output_tpm become, and that bad values are all reported with file, line
// and key.
func TestGenerationKeys(t *testing.T) {
	const head = "name = \"a\"\nduration = \"1m\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\", count = 1 } ]\n[tools.t]\nservice = \"s\"\n[[strategy]]\nname = \"x\"\n[services.s]\n"
	sc, err := Parse("a.toml", []byte(head+"ttft = \"250ms\"\ntokens_per_s = { dist = \"lognormal\", p50 = 50, p95 = 90 }\ninput_tpm = \"100/s\"\noutput_tpm = 8000\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := sc.Services[0]
	if s.Generation.TTFT.Kind != spec.DistConstant || s.Generation.TTFT.Value != 250*time.Millisecond || s.Generation.TokensPerSecond.Kind != spec.DistLognormal ||
		s.Generation.TokensPerSecond.P95 != 90 || s.InputTokensPerMinute != 6000 || s.OutputTokensPerMinute != 8000 {
		t.Errorf("service %+v", s)
	}
	// Without the keys nothing is set.
	sc, err = Parse("a.toml", []byte(head+"rpm = 60\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := sc.Services[0]; s.Generation.TTFT.Kind != "" || s.Generation.TokensPerSecond.Kind != "" || s.InputTokensPerMinute != 0 || s.OutputTokensPerMinute != 0 {
		t.Errorf("service without the keys %+v", s)
	}
	_, err = Parse("a.toml", []byte(head+"ttft = \"-1s\"\ntokens_per_s = 0\ninput_tpm = -5\noutput_tpm = { dist = \"constant\", value = 1 }\n"))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"a.toml:11:1: services.s.ttft:",
		"a.toml:12:1: services.s.tokens_per_s: is 0, so no answer would ever finish",
		"a.toml:13:1: services.s.input_tpm:",
		"a.toml:14:1: services.s.output_tpm:",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nwant it to say %q", err, want)
		}
	}
}
