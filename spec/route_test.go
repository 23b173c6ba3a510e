package spec

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParseResourceFrom checks the one parser of resource_from: what it
// accepts, what it rejects and why, and that String writes back what it
// parsed. The inputs marked "once accepted by fakeapi" are those the fake
// server's own parser let through while scenario files rejected them.
func TestParseResourceFrom(t *testing.T) {
	tests := []struct {
		give    string
		want    ResourceFrom
		wantErr string
	}{
		{give: "", want: ResourceFrom{}},
		{give: "path:1", want: ResourceFrom{Kind: ResourcePath, Segment: 1}},
		{give: "path:12", want: ResourceFrom{Kind: ResourcePath, Segment: 12}},
		{give: "json:doc_id", want: ResourceFrom{Kind: ResourceJSON, Name: "doc_id"}},
		{give: "json:a:b", want: ResourceFrom{Kind: ResourceJSON, Name: "a:b"}},
		{give: "header:X-Doc-Id", want: ResourceFrom{Kind: ResourceHeader, Name: "X-Doc-Id"}},
		{give: "path:0", wantErr: `"path:0": the path segment must be a whole number from 1, like "path:1"`},
		{give: "path:x", wantErr: `"path:x": the path segment must be a whole number from 1`},
		{give: "path", wantErr: `"path": the path segment must be a whole number from 1`},
		{give: "cookie:id", wantErr: `"cookie:id" is not "path:N", "json:FIELD" or "header:NAME"`},
		{give: "json:", wantErr: `"json:" is not "path:N", "json:FIELD" or "header:NAME"`},
		{give: "header", wantErr: `"header" is not`},
		{give: ":", wantErr: `":" is not`},
		{give: ":id", wantErr: `":id" is not`},
		// once accepted by fakeapi:
		{give: "header:X\r\nInjected: 1", wantErr: `"header:X\r\nInjected: 1": "X\r\nInjected: 1" is not an HTTP header name`},
		{give: "header:X Doc", wantErr: `"X Doc" is not an HTTP header name`},
		{give: "json:a\tb", wantErr: `"json:a\tb": the field holds the control character U+0009`},
		{give: "json:a\u202eb", wantErr: `the field holds the control character U+202E`},
	}
	for _, tt := range tests {
		got, err := ParseResourceFrom(tt.give)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseResourceFrom(%q) = %+v, %v; want the error %q", tt.give, got, err, tt.wantErr)
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("ParseResourceFrom(%q) = %+v, %v; want %+v", tt.give, got, err, tt.want)
		case tt.wantErr == "" && (got.String() != tt.give || got.Problem() != ""):
			t.Errorf("ParseResourceFrom(%q) writes back as %q with problem %q", tt.give, got.String(), got.Problem())
		}
	}
}

// TestResourceFromProblem checks the validator of a ResourceFrom built in
// Go, which ParseResourceFrom did not make.
func TestResourceFromProblem(t *testing.T) {
	tests := []struct {
		give ResourceFrom
		want string
	}{
		{ResourceFrom{}, ""},
		{ResourceFrom{Kind: ResourcePath, Segment: 3}, ""},
		{ResourceFrom{Kind: ResourcePath}, `"path:0": the path segment`},
		{ResourceFrom{Kind: ResourcePath, Segment: 1, Name: "x"}, `the path segment`},
		{ResourceFrom{Name: "x"}, `is not "path:N"`},
		{ResourceFrom{Kind: ResourceJSON, Name: "id", Segment: 1}, `"json:id" is not`},
		{ResourceFrom{Kind: ResourceHeader, Name: "a\nb"}, `is not an HTTP header name`},
		{ResourceFrom{Kind: "cookie", Name: "id"}, `"cookie:id" is not`},
	}
	for _, tt := range tests {
		if got := tt.give.Problem(); !strings.Contains(got, tt.want) || (tt.want == "") != (got == "") {
			t.Errorf("%+v.Problem() = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestWriteRouteAndAgentProblems(t *testing.T) {
	got := WriteRoute{Path: "tools/x", ResourceFrom: ResourceFrom{Kind: ResourcePath}}.Problems()
	want := []Problem{
		{Key: "path", Msg: `"tools/x" does not start with /`},
		{Key: "resource_from", Msg: `"path:0": the path segment must be a whole number from 1, like "path:1"`},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("route problems %q, want %q", got, want)
	}
	if ps := (WriteRoute{Path: "/tools/x"}).Problems(); ps != nil {
		t.Errorf("a valid route: %q", ps)
	}
	got = Agent{MaxIterations: -2, FinishProbability: -0.5}.Problems()
	want = []Problem{
		{Key: "max_iterations", Msg: "is negative (-2)"},
		{Key: "finish_probability", Msg: "-0.5 is outside [0, 1]"},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("agent problems %q, want %q", got, want)
	}
	for _, a := range []Agent{{}, {MaxIterations: 5, FinishProbability: 1}} {
		if ps := a.Problems(); ps != nil {
			t.Errorf("%+v: %q", a, ps)
		}
	}
}

// TestResourceFromJSON checks that a ResourceFrom encodes in JSON as its
// text, as the string it replaced did (a scenario's digest hashes the
// scenario's JSON), and decodes back.
func TestResourceFromJSON(t *testing.T) {
	for _, give := range []string{"", "path:2", "json:doc_id", "header:X-Doc-Id"} {
		r, err := ParseResourceFrom(give)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(struct{ ResourceFrom ResourceFrom }{r})
		want, _ := json.Marshal(struct{ ResourceFrom string }{give})
		if err != nil || string(b) != string(want) {
			t.Errorf("%q encodes as %s, %v; want %s", give, b, err, want)
		}
		var back struct{ ResourceFrom ResourceFrom }
		if err := json.Unmarshal(b, &back); err != nil || back.ResourceFrom != r {
			t.Errorf("%s decodes as %+v, %v", b, back.ResourceFrom, err)
		}
	}
	var bad struct{ ResourceFrom ResourceFrom }
	if err := json.Unmarshal([]byte(`{"ResourceFrom":"path:0"}`), &bad); err == nil || !strings.Contains(err.Error(), `"path:0": the path segment`) {
		t.Errorf("path:0 decodes: %v", err)
	}
}
