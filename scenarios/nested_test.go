package scenarios

import (
	"strings"
	"testing"

	"github.com/simbench/simbench/spec"
)

// nestedHead is a scenario whose service s (the organisation, 100
// requests/min) takes the keys and projects a test appends.
const nestedHead = "name = \"a\"\nduration = \"1m\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\", count = 1 } ]\n[tools.t]\nservice = \"s\"\n[[strategy]]\nname = \"x\"\n[services.s]\nrpm = 100\n"

// TestNestedLimitsDecode reads keys written as tables and projects into
// the fake service's nested limits, in file order.
func TestNestedLimitsDecode(t *testing.T) {
	sc, err := Parse("a.toml", []byte(nestedHead+`keys = ["sk-ops", { key = "sk-a", project = "research", rpm = 60, max_concurrent = 2 }]
[services.s.projects.research]
rpm = 90
tpm = "1000/s"
[services.s.projects.batch]
rps = 1
`))
	if err != nil {
		t.Fatal(err)
	}
	c := sc.Services[0].Model()
	wantKeys := []spec.Key{{Key: "sk-ops"}, {Key: "sk-a", Project: "research", RPM: 60, MaxConcurrent: 2}}
	wantProjects := []spec.Project{{Name: "research", RPM: 90, TPM: 60_000}, {Name: "batch", RPS: 1}}
	if len(c.Keys) != 2 || c.Keys[0] != wantKeys[0] || c.Keys[1] != wantKeys[1] {
		t.Errorf("keys %+v, want %+v", c.Keys, wantKeys)
	}
	if len(c.Projects) != 2 || c.Projects[0] != wantProjects[0] || c.Projects[1] != wantProjects[1] {
		t.Errorf("projects %+v, want %+v", c.Projects, wantProjects)
	}
	if sc.Services[0].ClientKey() != "sk-ops" {
		t.Errorf("client key %q, want the first, sk-ops", sc.Services[0].ClientKey())
	}
}

// TestNestedLimitsProblems: each mistake of nested limits is reported at
// its file, line and key.
func TestNestedLimitsProblems(t *testing.T) {
	for _, tc := range []struct{ give, want string }{
		{`keys = [{ key = "sk-a", project = "reserch" }]
[services.s.projects.research]
rpm = 90
`, `a.toml:12:25: services.s.keys[0].project: names project "reserch", which is not one of the service's projects ("research")`},
		{`keys = ["sk-a"]
[services.s.projects.research]
rpm = 120
`, `a.toml:14:1: services.s.projects.research.rpm: is 120, above the organisation's 100; a provider caps a level by the one it belongs to, so lower it to at most 100 or remove it`},
		{`keys = [{ key = "sk-a", project = "p", rpm = 60 }]
[services.s.projects.p]
rpm = 50
`, `a.toml:12:40: services.s.keys[0].rpm: is 60, above project "p"'s 50`},
		{`keys = ["sk-a", { key = "sk-a", rpm = 5 }]
`, `services.s.keys[1]: repeats key "sk-a"`},
		{`keys = [{ project = "p" }]
`, `a.toml:12:9: services.s.keys[0]: missing key`},
		{`keys = [{ key = "sk-a", rmp = 5 }]
`, `a.toml:12:25: services.s.keys[0].rmp: unknown key; the keys here are key, project, rps, rpm, tpm, max_concurrent`},
		{`keys = [3]
`, `services.s.keys[0]: wants an API key, a string or a table`},
		{`[services.s.projects.p]
rpm = 5
`, `services.s.projects: group API keys, but the service has no keys`},
	} {
		_, err := Parse("a.toml", []byte(nestedHead+tc.give))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v\nwant it to say %q", tc.give, err, tc.want)
		}
	}
}
