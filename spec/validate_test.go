package spec

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestDistProblems(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		give    Dist[time.Duration]
		wantKey string // "" when the distribution is valid
		wantMsg string
	}{
		{Constant(100 * ms), "", ""},
		{Dist[time.Duration]{}, "", ""},
		{Dist[time.Duration]{Kind: DistLognormal, P50: 100 * ms, P95: 300 * ms}, "", ""},
		{Dist[time.Duration]{Kind: DistLognormal, P50: 100 * ms, P95: 100 * ms}, "p95", "equals p50"},
		{Dist[time.Duration]{Kind: DistLognormal, P50: 100 * ms, P95: 50 * ms}, "p95", "is below p50"},
		{Dist[time.Duration]{Kind: DistLognormal, P95: 50 * ms}, "p50", "greater than 0"},
		{Dist[time.Duration]{Kind: DistLognormal, P50: 100 * ms, P95: 300 * ms, Max: 50 * ms}, "max", "below p50"},
		{Dist[time.Duration]{Kind: DistUniform, Min: 2 * ms, Max: ms}, "max", "swap them"},
		{Dist[time.Duration]{Kind: DistUniform, Min: ms, Max: ms}, "", ""},
		{Dist[time.Duration]{Kind: DistNormal, Mean: -ms}, "mean", "0 or more"},
		{Dist[time.Duration]{Kind: DistExponential}, "mean", "greater than 0"},
		{Dist[time.Duration]{Kind: DistPareto, Min: ms}, "alpha", "greater than 0"},
		{Dist[time.Duration]{Kind: DistPareto, Alpha: 1}, "min", "greater than 0"},
		{Dist[time.Duration]{Kind: DistEmpirical, File: "lat.txt"}, "file", "no values are loaded"},
		{Dist[time.Duration]{Kind: DistEmpirical, Samples: []time.Duration{ms, -ms}}, "file", "value 2 is -1ms"},
		{Dist[time.Duration]{Kind: "weibull"}, "dist", `unknown value "weibull"`},
	}
	for _, tt := range tests {
		checkProblems(t, fmt.Sprintf("%+v", tt.give), tt.give.Problems(), tt.wantKey, tt.wantMsg)
	}
}

// checkProblems fails unless ps is empty (wantMsg "") or holds exactly one
// problem, at wantKey, saying wantMsg.
func checkProblems(t *testing.T, name string, ps []Problem, wantKey, wantMsg string) {
	t.Helper()
	switch {
	case wantMsg == "" && len(ps) > 0:
		t.Errorf("%s: problems %v, want none", name, ps)
	case wantMsg != "" && (len(ps) != 1 || ps[0].Key != wantKey || !strings.Contains(ps[0].Msg, wantMsg)):
		t.Errorf("%s: problems %v, want one at %q saying %q", name, ps, wantKey, wantMsg)
	}
}

// TestConfigProblems covers the rules each of the two validators this one
// replaced had alone, and the keys the problems name.
func TestConfigProblems(t *testing.T) {
	base := Config{Name: "api", RPS: 5}
	tests := []struct {
		name    string
		give    func(*Config)
		wantKey string // "" for a valid configuration
		wantMsg string
	}{
		{"valid", func(*Config) {}, "", ""},
		// A lie without headers has no effect; scenario files refuse it as
		// they do other settings without effect, the model sends no delay.
		{"lying without headers", func(c *Config) { c.Lie, c.Headers = LieShort, HeadersNone }, "", ""},
		{"lying with default headers", func(c *Config) { c.Lie = LieShort }, "", ""},
		{"burst with fixed window", func(c *Config) { c.Burst, c.Algorithm = 5, FixedWindow }, "burst", "only applies"},
		{"burst without a request limit", func(c *Config) { c.Burst, c.RPS = 5, 0 }, "burst", "no rps or rpm"},
		{"name with a slash", func(c *Config) { c.Name = "a/b" }, "", "path segment"},
		{"reserved name", func(c *Config) { c.Name = "_simbench" }, "", "server's own"},
		{"faults add up past 1", func(c *Config) { c.Faults.ErrorRate, c.Faults.HangRate = 0.6, 0.5 }, "faults", "at most 1"},
		{"overload without length", func(c *Config) { c.Faults.Overload.Every = time.Minute }, "faults.overload.length", "is 0"},
		{"duplicate key", func(c *Config) { c.Keys = []Key{{Key: "k"}, {Key: "k"}} }, "keys[1]", `repeats key "k"`},
		{"latency", func(c *Config) {
			c.Latency = Dist[time.Duration]{Kind: DistLognormal, P50: time.Second, P95: time.Second}
		}, "latency.p95", "equals p50"},
		{"ttft", func(c *Config) { c.Generation.TTFT = Dist[time.Duration]{Kind: DistExponential} }, "ttft.mean", "greater than 0"},
		{"tokens per second", func(c *Config) { c.Generation.TokensPerSecond = Constant(2e12) }, "tokens_per_s", "at most"},
		{"rpm too large", func(c *Config) { c.RPM = MaxLimit + 1 }, "rpm", "too large"},
		{"tpm of 10^12 a minute", func(c *Config) { c.TPM = 1_000_000_000_000 }, "", ""},
		{"rps too large", func(c *Config) { c.RPS = MaxRPS + 1 }, "rps", "too large"},
		{"error status", func(c *Config) { c.Faults.ErrorStatus = 404 }, "faults.error_status", "5xx"},
		{"nested limits", func(c *Config) {
			c.RPM, c.Projects = 100, []Project{{Name: "research", RPM: 90}}
			c.Keys = []Key{{Key: "a", RPM: 60, Project: "research"}, {Key: "b", RPM: 100}}
		}, "", ""},
		{"key in a missing project", func(c *Config) {
			c.Projects, c.Keys = []Project{{Name: "research"}}, []Key{{Key: "a", Project: "reserch"}}
		}, "keys[0].project", `names project "reserch", which is not one of the service's projects ("research")`},
		{"project without projects", func(c *Config) { c.Keys = []Key{{Key: "a", Project: "research"}} }, "keys[0].project", "has no projects"},
		{"duplicate project", func(c *Config) {
			c.Projects, c.Keys = []Project{{Name: "p"}, {Name: "p"}}, []Key{{Key: "a"}}
		}, "projects[1]", `repeats project "p"`},
		{"unnamed project", func(c *Config) { c.Projects, c.Keys = []Project{{}}, []Key{{Key: "a"}} }, "projects[0]", "has no name"},
		{"projects without keys", func(c *Config) { c.Projects = []Project{{Name: "p"}} }, "projects", "no keys"},
		{"project above the organisation", func(c *Config) {
			c.RPM, c.Projects, c.Keys = 100, []Project{{Name: "p", RPM: 120}}, []Key{{Key: "a", Project: "p"}}
		}, "projects[0].rpm", "is 120, above the organisation's 100"},
		{"key above its project", func(c *Config) {
			c.Projects, c.Keys = []Project{{Name: "p", TPM: 1000}}, []Key{{Key: "a", Project: "p", TPM: 2000}}
		}, "keys[0].tpm", `is 2000, above project "p"'s 1000`},
		{"key above the organisation through its project", func(c *Config) {
			c.Projects, c.Keys = []Project{{Name: "p"}}, []Key{{Key: "a", Project: "p", RPS: 6}}
		}, "keys[0].rps", `is 6, above project "p"'s 5`},
		{"negative project limit", func(c *Config) {
			c.Projects, c.Keys = []Project{{Name: "p", MaxConcurrent: -1}}, []Key{{Key: "a"}}
		}, "projects[0]", "must not be negative"},
	}
	for _, tt := range tests {
		c := base
		tt.give(&c)
		checkProblems(t, tt.name, c.Problems(), tt.wantKey, tt.wantMsg)
	}
}

func TestValidateNamesTheService(t *testing.T) {
	err := Config{Name: "api", RPS: -1}.Validate()
	if err == nil || err.Error() != `service "api": rps: is -1; it must not be negative` {
		t.Fatalf("Validate = %v", err)
	}
}

// An API style is one of APIStyles, each accepted, or "".
func TestValidateAPIStyle(t *testing.T) {
	for _, api := range append([]APIStyle{""}, APIStyles...) {
		if err := (Config{Name: "s", RPS: 5, API: api}).Validate(); err != nil {
			t.Errorf("api %q: %v", api, err)
		}
	}
	err := Config{Name: "s", RPS: 5, API: "vertex"}.Validate()
	if err == nil || !strings.Contains(err.Error(), `api: unknown value "vertex"; use one of "openai", "anthropic", "generic", "azure", "gemini", "bedrock"`) {
		t.Errorf("api vertex: %v", err)
	}
}
