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
