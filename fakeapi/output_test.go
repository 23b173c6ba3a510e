package fakeapi

import (
	"strings"
	"testing"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// TestDecodeOutputTokens checks how a generic request gives its output
// tokens: the X-Simbench-Output-Tokens header over the body's
// output_tokens, 0 without either, and an error for a bad value; a
// provider endpoint takes them from max_tokens whatever the header says.
func TestDecodeOutputTokens(t *testing.T) {
	tests := []struct {
		name         string
		ep           wire.Endpoint
		body, header string
		in, out      int64
		err          string
	}{
		{"header", wire.EpGeneric, "", "300", 700, 300, ""},
		{"body", wire.EpGeneric, `{"tokens": 5, "output_tokens": 40}`, "", 700, 40, ""},
		{"header over body", wire.EpGeneric, `{"output_tokens": 40}`, "41", 700, 41, ""},
		{"neither", wire.EpGeneric, "", "", 700, 0, ""},
		{"bad header", wire.EpGeneric, "", "many", 0, 0, `X-Simbench-Output-Tokens "many" is not a non-negative integer`},
		{"negative body", wire.EpGeneric, `{"output_tokens": -1}`, "", 0, 0, "must not be negative"},
		{"provider wire.Endpoint", wire.EpChat, `{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 9}`, "300", 700, 9, ""},
	}
	for _, tt := range tests {
		d, err := wire.DecodeRequest(spec.APIOpenAI, tt.ep, []byte(tt.body), "700", tt.header, 16)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || d.Input != tt.in || d.Output != tt.out {
			t.Errorf("%s: input %d, output %d, error %v; want %d, %d", tt.name, d.Input, d.Output, err, tt.in, tt.out)
		}
	}
}
