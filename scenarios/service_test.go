package scenarios_test

import (
	"errors"
	"testing"

	"github.com/simbench/simbench/scenarios"
)

// TestServiceRulesAtTheirKeys: the loader reports a service's problems at
// the key they concern, those the one validator finds (a name the server
// cannot route, a lognormal without spread: refused only by the fake
// service before) and the file's own (a setting without effect).
func TestServiceRulesAtTheirKeys(t *testing.T) {
	const head = "duration = \"1m\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\" } ]\n[[strategy]]\nname = \"s\"\n"
	tests := []struct {
		name, service, want string
	}{
		{"name with a slash", "[services.\"a/b\"]\nrps = 1\n[tools.t]\nservice = \"a/b\"\n",
			`x.toml:7:11: services."a/b": the name "a/b" must be usable as a URL path segment: no /, ?, #, %, space or control character`},
		{"lognormal without spread", "[services.api]\nttft = { dist = \"lognormal\", p50 = \"1s\", p95 = \"1s\" }\n[tools.t]\nservice = \"api\"\n",
			`x.toml:8:42: services.api.ttft.p95: p95 (1s) equals p50; a lognormal needs p95 above p50 (for a fixed value, use a constant)`},
		{"lying without headers", "[services.api]\nlying = \"short\"\n[tools.t]\nservice = \"api\"\n",
			`x.toml:8:1: services.api.lying: needs a Retry-After to lie about; set headers = "openai", "anthropic" or "standard"`},
		{"burst with a fixed window", "[services.api]\nrps = 5\nlimiter = \"fixed_window\"\nburst = 5\n[tools.t]\nservice = \"api\"\n",
			`x.toml:10:1: services.api.burst: only applies to limiter = "token_bucket"; remove it or change the limiter`},
	}
	for _, tt := range tests {
		_, err := scenarios.Parse("x.toml", []byte(head+tt.service))
		var bad *scenarios.Error
		if !errors.As(err, &bad) || len(bad.Problems) != 1 || bad.Problems[0].String() != tt.want {
			t.Errorf("%s: %v\nwant %s", tt.name, err, tt.want)
		}
	}
}
