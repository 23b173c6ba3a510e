package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/sched"
)

// routeHead is a scenario with two services and a tool naming route chat,
// whose table a test appends.
const routeHead = `name = "a"
duration = "1m"
[workload]
sessions = 1
calls = [ { tool = "ask", count = 1 } ]
[services.primary]
rpm = 60
[services.fallback]
rpm = 30
[tools.ask]
service = "chat"
`

// TestRouteKeys checks that a route decodes into the scheduler's values,
// that a strategy's fall_back_after replaces the route's, and that "never"
// reads as sched.NoFallBack.
func TestRouteKeys(t *testing.T) {
	sc, err := Parse("a.toml", []byte(routeHead+`[routes.chat]
deployments = ["primary", "fallback"]
fall_back_after = "15s"
cooldown_after = 3
cooldown = "60s"
[[strategy]]
name = "wait"
fall_back_after = "never"
[[strategy]]
name = "route's own"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Route{Name: "chat", Deployments: []string{"primary", "fallback"}, Policy: sched.RouteOrdered, FallBackAfter: 15 * time.Second, CooldownAfter: 3, Cooldown: time.Minute}
	if r := sc.Route("chat"); r == nil || r.Name != want.Name || strings.Join(r.Deployments, ",") != "primary,fallback" || r.Policy != want.Policy ||
		r.FallBackAfter != want.FallBackAfter || r.CooldownAfter != want.CooldownAfter || r.Cooldown != want.Cooldown {
		t.Fatalf("route: %+v, want %+v", r, want)
	}
	if f := sc.Strategies[0].FallBackAfter; f == nil || *f != sched.NoFallBack {
		t.Errorf("strategy wait: fall_back_after %v, want NoFallBack", f)
	}
	if f := sc.Strategies[1].FallBackAfter; f != nil {
		t.Errorf("strategy route's own: fall_back_after %v, want nil", *f)
	}
	if sc.Tool("ask").Service != "chat" {
		t.Errorf("tool ask names %q, want the route", sc.Tool("ask").Service)
	}
}

// TestRouteProblems checks that every bad route key is reported at once,
// each with its file, line and key.
func TestRouteProblems(t *testing.T) {
	_, err := Parse("a.toml", []byte(routeHead+`[routes.chat]
deployments = ["primary", "nope", "primary"]
policy = "random"
fall_back_after = "soon"
cooldown_after = 3
[routes.primary]
deployments = []
cooldown = "1m"
[workload.llm]
service = "chat"
[[strategy]]
name = "x"
`))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`a.toml:13:27: routes.chat.deployments[1]: unknown service "nope"`,
		`a.toml:13:35: routes.chat.deployments[2]: lists "primary" twice`,
		`a.toml:14:1: routes.chat.policy: unknown value "random"`,
		`a.toml:15:1: routes.chat.fall_back_after: is "soon"; write the longest wait`,
		`a.toml:16:1: routes.chat.cooldown_after: needs a cooldown`,
		`routes.primary: route "primary" has the name of a service`,
		`routes.primary.deployments: is empty`,
		`routes.primary.cooldown: needs cooldown_after`,
		`workload.llm.service: names route "chat"; only a tool may name a route`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	_, err = Parse("a.toml", []byte(strings.Replace(routeHead, `service = "chat"`, `service = "primary"`, 1)+"[[strategy]]\nname = \"x\"\nfall_back_after = \"15s\"\n"))
	if err == nil || !strings.Contains(err.Error(), "a.toml:14:1: strategy[0].fall_back_after: only applies to routes") {
		t.Errorf("fall_back_after without routes: %v", err)
	}
}
