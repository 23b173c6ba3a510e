package wire

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
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

// TestDistinctArgs holds the arguments of the parallel calls of one answer
// to a JSON Schema validator (google/jsonschema-go, an implementation
// independent of MinimalArgs): each is valid against its schema, the first
// is MinimalArgs, and where the schema admits it the calls differ from one
// another; where it admits nothing else they stay the minimal arguments.
func TestDistinctArgs(t *testing.T) {
	tests := []struct {
		name, schema string
		differ       bool
	}{
		{"zod string", `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`, true},
		{"string bounds", `{"type":"object","properties":{"s":{"type":"string","minLength":3,"maxLength":5}},"required":["s"]}`, true},
		{"integer bounds", `{"type":"object","properties":{"n":{"type":"integer","minimum":1.5,"maximum":40}},"required":["n"]}`, true},
		{"exclusive number", `{"type":"object","properties":{"x":{"type":"number","exclusiveMinimum":0}},"required":["x"]}`, true},
		{"pattern then integer", `{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]*$"},"page":{"type":"integer"}},"required":["id","page"]}`, true},
		{"optional string", `{"type":"object","properties":{"c":{"const":"k"},"note":{"type":"string"}},"required":["c"],"additionalProperties":false}`, true},
		{"enum", `{"type":"object","properties":{"e":{"enum":["a","b","c","d","e","f","g","h","i"]}},"required":["e"]}`, true},
		{"ref", `{"type":"object","$defs":{"Q":{"type":"string"}},"properties":{"q":{"$ref":"#/$defs/Q"}},"required":["q"]}`, true},
		{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"boolean"}},"required":["b"]}]}`, true},
		{"nothing else", `{"type":"object","properties":{"c":{"const":1},"f":{"type":"string","format":"date"}},"required":["c","f"],"additionalProperties":false}`, false},
		{"tight", `{"type":"object","properties":{"s":{"type":"string","maxLength":0},"n":{"type":"integer","minimum":3,"maximum":3}},"required":["s","n"]}`, false},
		{"no properties", `{"type":"object"}`, false},
	}
	const calls = 9
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s jsonschema.Schema
			if err := json.Unmarshal([]byte(tt.schema), &s); err != nil {
				t.Fatal(err)
			}
			rs, err := s.Resolve(nil)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for i := range calls {
				got := DistinctArgs(json.RawMessage(tt.schema), i)
				var v any
				if err := json.Unmarshal(got, &v); err != nil {
					t.Fatalf("call %d: %s, not JSON: %v", i, got, err)
				}
				if err := rs.Validate(v); err != nil {
					t.Errorf("call %d: %s is not valid against the schema: %v", i, got, err)
				}
				if i == 0 && string(got) != string(MinimalArgs(json.RawMessage(tt.schema))) {
					t.Errorf("call 0: %s, want MinimalArgs %s", got, MinimalArgs(json.RawMessage(tt.schema)))
				}
				if j, ok := seen[string(got)]; ok && tt.differ {
					t.Errorf("calls %d and %d both get %s", j, i, got)
				}
				seen[string(got)] = i
			}
			if !tt.differ && len(seen) != 1 {
				t.Errorf("%d different arguments, want the minimal ones only: %v", len(seen), seen)
			}
		})
	}
}
