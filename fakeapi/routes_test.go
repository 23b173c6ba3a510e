package fakeapi

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

func TestServeWriteRoutesResourceFrom(t *testing.T) {
	lat := spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 300 * time.Millisecond}
	routes := []WriteRoute{
		{Path: "/tools/save", ResourceFrom: resourceFrom(t, "path:2")},
		{Path: "/tools/put", ResourceFrom: resourceFrom(t, "json:doc_id")},
		{Path: "/tools/tag", ResourceFrom: resourceFrom(t, "header:X-Doc-Id")},
	}
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{
		{Config: spec.Config{Name: "tool", Latency: lat}, WriteRoutes: routes},
		{Config: spec.Config{Name: "strict", Latency: lat, Faults: spec.Faults{Conflict: 1}}, WriteRoutes: routes},
		// Provider endpoints are reads even under a declared write route.
		{Config: spec.Config{Name: "llm", TPM: 10_000_000, Latency: lat}, WriteRoutes: []WriteRoute{{Path: "/v1", ResourceFrom: resourceFrom(t, "header:X-Doc-Id")}}},
	}})
	// pair sends two overlapping requests, the ith with path, body and
	// header value i.
	pair := func(svc string, path, body, hdr [2]string) {
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() { do(t, c, "POST", s.URL(svc)+path[i], body[i], "X-Doc-Id", hdr[i]) })
		}
		wg.Wait()
	}
	same := func(v string) [2]string { return [2]string{v, v} }
	cases := []struct {
		name            string
		path, body, hdr [2]string
		race            bool
	}{
		{"path same", same("/tools/save/x/doc-1"), same(`{}`), same(""), true},
		{"path different", [2]string{"/tools/save/x/doc-1", "/tools/save/y/doc-2"}, same(`{}`), same(""), false},
		// The key is the 2nd segment: differing 1st segments still race.
		{"path same key", [2]string{"/tools/save/x/doc-1", "/tools/save/y/doc-1"}, same(`{}`), same(""), true},
		{"json same", same("/tools/put"), same(`{"doc_id":"a","resource":"r"}`), same(""), true},
		{"json different", same("/tools/put"), [2]string{`{"doc_id":"a","resource":"r"}`, `{"doc_id":7,"resource":"r"}`}, same(""), false},
		{"header same", same("/tools/tag"), same(`{}`), same("d1"), true},
		{"header different", same("/tools/tag"), same(`{"resource":"r"}`), [2]string{"d1", "d2"}, false},
		{"not a wire.RouteOf", same("/tools/saved"), same(`{}`), same(""), false},
	}
	for _, tc := range cases {
		for _, svc := range []string{"tool", "strict"} {
			before := s.Stats().Services[svc]
			pair(svc, tc.path, tc.body, tc.hdr)
			after := s.Stats().Services[svc]
			races, conflicts := after.WriteRaces-before.WriteRaces, after.Conflicts-before.Conflicts
			want := int64(0)
			if tc.race {
				want = 1
			}
			if svc == "tool" && (races != want || conflicts != 0) {
				t.Errorf("%s on %s: %d races, %d conflicts; want %d races", tc.name, svc, races, conflicts, want)
			}
			if svc == "strict" && (conflicts != want || races != 0) {
				t.Errorf("%s on %s: %d races, %d conflicts; want %d conflicts", tc.name, svc, races, conflicts, want)
			}
		}
	}
	pair("llm", same("/v1/chat/completions"), same(chatBody), same("d1"))
	if st := s.Stats().Services["llm"]; st.WriteRaces != 0 || st.Conflicts != 0 || st.Completed != 2 {
		t.Errorf("provider calls: %+v, want 2 completed reads", st)
	}
}

// resourceFrom parses s, which must be valid.
func resourceFrom(t *testing.T, s string) spec.ResourceFrom {
	t.Helper()
	r, err := spec.ParseResourceFrom(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestWriteRoutesValidate checks that Validate rejects routes by spec's
// rules (spec.WriteRoute.Problems), the ones scenario files are held to:
// the header name with CR LF in it, which fakeapi once accepted while
// scenario files did not, is rejected by both.
func TestWriteRoutesValidate(t *testing.T) {
	cfg := ServiceConfig{Config: spec.Config{Name: "tool"}, WriteRoutes: []WriteRoute{
		{Path: "/tools/a", ResourceFrom: spec.ResourceFrom{Kind: spec.ResourcePath}},
		{Path: "tools/b", ResourceFrom: spec.ResourceFrom{Kind: spec.ResourceJSON, Name: "id"}},
		{Path: "/tools/c", ResourceFrom: spec.ResourceFrom{Kind: "cookie", Name: "id"}},
		{Path: "/tools/d", ResourceFrom: spec.ResourceFrom{Kind: spec.ResourceHeader}},
		{Path: "/tools/e", ResourceFrom: spec.ResourceFrom{Kind: spec.ResourceHeader, Name: "X\r\nInjected: 1"}},
		{Path: "/tools/f", ResourceFrom: spec.ResourceFrom{Kind: spec.ResourcePath, Segment: 2}},
	}}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`service "tool": write_routes[0].resource_from: "path:0": the path segment must be a whole number from 1`,
		`service "tool": write_routes[1].path: "tools/b" does not start with /`,
		`service "tool": write_routes[2].resource_from: "cookie:id" is not`,
		`service "tool": write_routes[3].resource_from: "header:" is not`,
		`service "tool": write_routes[4].resource_from: "header:X\r\nInjected: 1": "X\r\nInjected: 1" is not an HTTP header name`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nlacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "write_routes[5]") {
		t.Errorf("%v\nreports the valid wire.RouteOf", err)
	}
}

// TestAgentValidate checks that Validate rejects an agent loop by spec's
// rules (spec.Agent.Problems).
func TestAgentValidate(t *testing.T) {
	cfg := ServiceConfig{Config: spec.Config{Name: "llm"}, Agent: AgentConfig{MaxIterations: -1, FinishProbability: 1.5}}
	err := cfg.Validate()
	for _, want := range []string{
		`fakeapi: service "llm": agent.max_iterations: is negative (-1)`,
		`fakeapi: service "llm": agent.finish_probability: 1.5 is outside [0, 1]`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nlacks %q", err, want)
		}
	}
	if err := (ServiceConfig{Config: spec.Config{Name: "llm"}, Agent: AgentConfig{MaxIterations: 3, FinishProbability: 1}}).Validate(); err != nil {
		t.Error(err)
	}
}
