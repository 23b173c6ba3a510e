package scenarios

import (
	"strings"
	"testing"

	"github.com/simbench/simbench/spec"
)

// TestAPIKey reads a service's api, which sets the default of headers to
// the provider's own, and reports an unknown one with its file, line and
// key.
func TestAPIKey(t *testing.T) {
	const head = "name = \"a\"\nduration = \"1m\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\", count = 1 } ]\n[tools.t]\nservice = \"s\"\n[[strategy]]\nname = \"x\"\n[services.s]\nrpm = 60\n"
	for _, tc := range []struct {
		give    string
		api     spec.APIStyle
		headers spec.HeaderStyle
	}{
		{"", "", spec.HeadersNone},
		{`api = "azure"`, spec.APIAzure, spec.HeadersOpenAI},
		{`api = "gemini"`, spec.APIGemini, spec.HeadersStandard},
		{`api = "anthropic"`, spec.APIAnthropic, spec.HeadersAnthropic},
		{"api = \"gemini\"\nheaders = \"none\"", spec.APIGemini, spec.HeadersNone},
		{`api = "bedrock"`, spec.APIBedrock, spec.HeadersNone},
	} {
		sc, err := Parse("a.toml", []byte(head+tc.give+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", tc.give, err)
		}
		s := sc.Services[0]
		if s.API != tc.api || s.Headers != tc.headers || s.Model().API != tc.api {
			t.Errorf("%q: api %q, headers %q, want %q and %q", tc.give, s.API, s.Headers, tc.api, tc.headers)
		}
	}
	// A Gemini service states its 429s' delay in the body only.
	sc, err := Parse("a.toml", []byte(head+"api = \"gemini\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f := sc.Services[0].Model().WithDefaults().Faults; f.RetryDelayBody != spec.RetryDelayInstead {
		t.Errorf("gemini faults %+v, want the delay in the body instead", f)
	}
	_, err = Parse("a.toml", []byte(head+"api = \"vertex\"\n"))
	if want := `a.toml:12:1: services.s.api: unknown value "vertex"; use one of "openai", "anthropic", "generic", "azure", "gemini", "bedrock"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want it to say %q", err, want)
	}
}
