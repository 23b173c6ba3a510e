package wire

import (
	"encoding/json"
	"testing"
)

func TestMinimalArgs(t *testing.T) {
	tests := []struct {
		name, give, want string
	}{
		{"no schema", ``, `{}`},
		{"not json", `{`, `{}`},
		{"no required", `{"type":"object","properties":{"q":{"type":"string"}}}`, `{}`},
		{"types", `{"type":"object","properties":{"s":{"type":"string"},"i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},"a":{"type":"array"},"o":{"type":"object"},"z":{"type":"null"}},"required":["s","i","n","b","a","o","z"]}`,
			`{"s":"","i":0,"n":0,"b":false,"a":[],"o":{},"z":null}`},
		{"bounds", `{"type":"object","properties":{"s":{"type":"string","minLength":3},"i":{"type":"integer","minimum":1.5},"x":{"type":"number","exclusiveMinimum":0},"m":{"type":"integer","maximum":-2},"a":{"type":"array","minItems":2,"items":{"type":"integer","minimum":7}}},"required":["s","i","x","m","a"]}`,
			`{"s":"aaa","i":2,"x":1,"m":-2,"a":[7,7]}`},
		{"enum and const", `{"type":"object","properties":{"e":{"type":"string","enum":["b","a"]},"c":{"const":{"k":1}}},"required":["e","c"]}`, `{"e":"b","c":{"k":1}}`},
		{"nullable type list", `{"type":"object","properties":{"u":{"type":["null","string"]}},"required":["u"]}`, `{"u":""}`},
		{"nested", `{"type":"object","properties":{"f":{"type":"object","properties":{"g":{"type":"integer"},"h":{"type":"string"}},"required":["g"]}},"required":["f"]}`, `{"f":{"g":0}}`},
		{"refs", `{"type":"object","$defs":{"P":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}},"properties":{"p":{"$ref":"#/$defs/P"}},"required":["p"]}`, `{"p":{"x":0}}`},
		{"anyOf first", `{"type":"object","properties":{"v":{"anyOf":[{"type":"integer"},{"type":"string"}]}},"required":["v"]}`, `{"v":0}`},
		{"allOf merged", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"boolean"}},"required":["b"]}]}`, `{"a":"","b":false}`},
		{"properties without type", `{"properties":{"q":{"type":"string"}},"required":["q"]}`, `{"q":""}`},
		{"self reference", `{"type":"object","properties":{"n":{"$ref":"#"}},"required":["n"]}`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MinimalArgs(json.RawMessage(tt.give))
			if !json.Valid(got) {
				t.Fatalf("MinimalArgs = %s, not JSON", got)
			}
			if tt.want != "" && string(got) != tt.want {
				t.Fatalf("MinimalArgs = %s, want %s", got, tt.want)
			}
		})
	}
}

// toolBody is a chat completion request offering tools search and fetch,
// with extra fields appended (such as a tool_choice).
