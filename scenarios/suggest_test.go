package scenarios

import (
	"errors"
	"strings"
	"testing"
)

func TestSuggest(t *testing.T) {
	base := errors.New("not found")
	tests := []struct {
		give, want string // want "" for no suggestion
	}{
		{"tier33", "did you mean tier3?"},
		{"burst8.toml", "did you mean burst-8?"},
		{"something-else-entirely", ""},
		{"tier3", ""}, // a built-in that did not load: no suggestion
	}
	for _, tt := range tests {
		err := Suggest(tt.give, base)
		if !errors.Is(err, base) {
			t.Errorf("Suggest(%q) lost the error: %v", tt.give, err)
		}
		got := strings.TrimPrefix(err.Error(), "not found")
		if tt.want == "" && got != "" || tt.want != "" && !strings.HasSuffix(got, tt.want) {
			t.Errorf("Suggest(%q) = %q, want suggestion %q", tt.give, err, tt.want)
		}
	}
}
