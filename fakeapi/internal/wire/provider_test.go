package wire

import "testing"

// TestAPIPath checks which paths of a provider-shaped service are taken
// for another API's (404) and which for tool paths.
func TestAPIPath(t *testing.T) {
	for path, want := range map[string]bool{
		"/v1": true, "/v1/x": true, "/v2/chat": true, "/v1beta/models/g:generateContent": true, "/v1alpha": true,
		"/v1beta1/x": true, "/openai/deployments/gpt4/chat/completions": true, "/model/m/converse": true,
		"/": false, "": false, "/tools/v1": false, "/llm": false, "/resources/doc-1": false, "/v": false,
		"/vx": false, "/v1x": false, "/v1betax": false, "/version": false, "/models": false, "/openaix": false,
	} {
		if got := apiPath(path); got != want {
			t.Errorf("apiPath(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestRouteParameters checks the routes with path parameters: a "{name}"
// segment takes one non-empty segment, "{name}:verb" one ending in the
// verb after a non-empty name, and nothing else.
func TestRouteParameters(t *testing.T) {
	gen := providerRoute{path: "/v1beta/models/{model}:generateContent"}
	dep := providerRoute{path: "/openai/deployments/{deployment}/chat/completions"}
	model := providerRoute{path: "/model/{*modelId}/converse"}
	for _, tc := range []struct {
		r    providerRoute
		path string
		want bool
	}{
		{gen, "/v1beta/models/gemini-2.5-flash:generateContent", true},
		{gen, "/v1beta/models/:generateContent", false},
		{gen, "/v1beta/models/m:streamGenerateContent", false},
		{gen, "/v1beta/models/m:generateContentx", false},
		{gen, "/v1beta/models/m", false},
		{gen, "/v1beta/models/a/b:generateContent", false},
		{gen, "/v1/models/m:generateContent", false},
		{dep, "/openai/deployments/gpt4/chat/completions", true},
		{dep, "/openai/deployments//chat/completions", false},
		{dep, "/openai/deployments/gpt4/chat/completions/x", false},
		{dep, "/openai/deployments/gpt4/chat", false},
		{dep, "/openai/deployments/a:b/chat/completions", false},
		{model, "/model/anthropic.claude-3-haiku-20240307-v1:0/converse", true},
		{model, "/model//converse", false},
		{model, "/model/a/b/converse", false},
		{providerRoute{path: "/v1/messages"}, "/v1/messages", true},
		{providerRoute{path: "/v1/messages"}, "/v1/messages/", false},
	} {
		if got := tc.r.matches(tc.path); got != tc.want {
			t.Errorf("%s matches %q = %v, want %v", tc.r.path, tc.path, got, tc.want)
		}
	}
}
