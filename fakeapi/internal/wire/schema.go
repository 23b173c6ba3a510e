package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The smallest arguments a tool's JSON schema accepts, which the fake
// model sends with its tool calls.

// MinimalArgs is the smallest JSON object the schema accepts: its required
// properties with the minimal values of their types (enums and consts take
// their first value). A schema that is not valid JSON gives {}.
func MinimalArgs(schema json.RawMessage) []byte {
	var root any
	if len(bytes.TrimSpace(schema)) == 0 || json.Unmarshal(schema, &root) != nil {
		return []byte("{}")
	}
	m, _ := root.(map[string]any)
	b := minimalValue(m, m, 0)
	if len(b) == 0 || b[0] != '{' {
		return []byte("{}")
	}
	return b
}

// maxSchemaDepth bounds $ref chains and nesting in minimalValue.
const maxSchemaDepth = 32

// minimalValue renders the minimal value a (sub)schema accepts; root
// resolves local $refs ("#/$defs/X", "#/definitions/X"). A $ref, const,
// enum or composition (anyOf, oneOf: the first alternative; allOf: the
// merge) decides before the type.
func minimalValue(s, root map[string]any, depth int) []byte {
	if s == nil || depth > maxSchemaDepth {
		return []byte("null")
	}
	if ref, ok := s["$ref"].(string); ok {
		return minimalValue(resolveRef(root, ref), root, depth+1)
	}
	if c, ok := s["const"]; ok {
		return mustJSON(c)
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return mustJSON(e[0])
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			sub, _ := alts[0].(map[string]any)
			return minimalValue(sub, root, depth+1)
		}
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 {
		return minimalValue(mergeAllOf(all, root), root, depth+1)
	}
	switch typ := schemaType(s); typ {
	case "object":
		return minimalObject(s, root, depth)
	case "array":
		n, _ := s["minItems"].(float64)
		items, _ := s["items"].(map[string]any)
		b := []byte{'['}
		for i := 0; i < int(min(n, 64)); i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, minimalValue(items, root, depth+1)...)
		}
		return append(b, ']')
	case "string":
		n, _ := s["minLength"].(float64)
		return mustJSON(strings.Repeat("a", int(min(n, 1024))))
	case "integer", "number":
		return minimalNumber(s, typ == "integer")
	case "boolean":
		return []byte("false")
	}
	if _, ok := s["properties"]; ok {
		c := map[string]any{"type": "object"}
		for k, v := range s {
			c[k] = v
		}
		return minimalValue(c, root, depth+1)
	}
	return []byte("null")
}

// mergeAllOf merges the schemas of an allOf into one: their keys, with the
// properties and required lists of all of them together ($refs resolved
// against root).
func mergeAllOf(all []any, root map[string]any) map[string]any {
	merged := map[string]any{}
	props := map[string]any{}
	var req []any
	for _, x := range all {
		sub, _ := x.(map[string]any)
		if r, ok := sub["$ref"].(string); ok {
			sub = resolveRef(root, r)
		}
		for k, v := range sub {
			merged[k] = v
		}
		if p, ok := sub["properties"].(map[string]any); ok {
			for k, v := range p {
				props[k] = v
			}
		}
		if r, ok := sub["required"].([]any); ok {
			req = append(req, r...)
		}
	}
	delete(merged, "allOf")
	merged["properties"], merged["required"] = props, req
	return merged
}

// minimalObject renders the minimal object schema s accepts: its required
// properties, each once, with their minimal values.
func minimalObject(s, root map[string]any, depth int) []byte {
	b := []byte{'{'}
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	seen := map[string]bool{}
	for _, r := range req {
		name, ok := r.(string)
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, mustJSON(name)...)
		b = append(b, ':')
		sub, _ := props[name].(map[string]any)
		b = append(b, minimalValue(sub, root, depth+1)...)
	}
	return append(b, '}')
}

// minimalNumber renders the number closest to 0 within schema s's bounds,
// rounded up to a whole number for an integer.
func minimalNumber(s map[string]any, integer bool) []byte {
	num := func(key string) (float64, bool) {
		v, ok := s[key].(float64)
		return v, ok
	}
	v := 0.0
	if lo, ok := num("minimum"); ok && lo > v {
		v = lo
	}
	if hi, ok := num("maximum"); ok && hi < v {
		v = hi
	}
	if lo, ok := num("exclusiveMinimum"); ok && v <= lo {
		v = lo + 1
	}
	if hi, ok := num("exclusiveMaximum"); ok && v >= hi {
		v = hi - 1
	}
	if integer {
		v = math.Ceil(v)
	}
	return strconv.AppendFloat(nil, v, 'f', -1, 64)
}

// schemaType is a schema's type: its "type", or the first type of a list
// that is not "null".
func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return strings.ToLower(t) // the Gemini API's OpenAPI types are "OBJECT", "STRING", ...
	case []any:
		for _, x := range t {
			if name, ok := x.(string); ok && name != "null" {
				return name
			}
		}
		if len(t) > 0 {
			name, _ := t[0].(string)
			return name
		}
	}
	return ""
}

// resolveRef returns the subschema of root a local JSON pointer ref names
// ("#", "#/$defs/X"), or nil.
func resolveRef(root map[string]any, ref string) map[string]any {
	path, ok := strings.CutPrefix(ref, "#/")
	if ref == "#" {
		return root
	}
	if !ok {
		return nil
	}
	var cur any = root
	for _, part := range strings.Split(path, "/") {
		m, _ := cur.(map[string]any)
		cur = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
	}
	m, _ := cur.(map[string]any)
	return m
}

// mustJSON is v as JSON.
func mustJSON(v any) []byte {
	b, _ := json.Marshal(v) // values decoded from JSON: cannot fail
	return b
}

// DistinctArgs is the arguments of the tool call at index i of one answer:
// MinimalArgs for the first call, and for a later one the same object with
// one top-level property set to a value that tells it apart from the calls
// before it (a string holding i, a number i above its minimum, an enum's
// i-th value), so parallel calls of one answer are different requests, as
// a model's are. The property is the first required one, in the schema's
// order, whose constraints admit such a value, else the first optional one
// by name; a schema with none gives MinimalArgs (a constant, a pattern, a
// format, a bound too tight).
func DistinctArgs(schema json.RawMessage, i int) []byte {
	minimal := MinimalArgs(schema)
	if i <= 0 {
		return minimal
	}
	var root map[string]any
	if json.Unmarshal(schema, &root) != nil {
		return minimal
	}
	s := root
	if ref, ok := s["$ref"].(string); ok {
		s = resolveRef(root, ref)
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 {
		s = mergeAllOf(all, root)
	}
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	var names []string
	for _, r := range req {
		if name, ok := r.(string); ok && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	required := len(names)
	optional := make([]string, 0, len(props))
	for name := range props {
		if !slices.Contains(names, name) {
			optional = append(optional, name)
		}
	}
	slices.Sort(optional)
	names = append(names, optional...)
	for k, name := range names {
		sub, _ := props[name].(map[string]any)
		if ref, ok := sub["$ref"].(string); ok {
			sub = resolveRef(root, ref)
		}
		v, ok := distinctValue(sub, i)
		if !ok {
			continue
		}
		b := []byte{'{'}
		for j, r := range names[:required] {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, mustJSON(r)...)
			b = append(b, ':')
			if j == k {
				b = append(b, v...)
				continue
			}
			rs, _ := props[r].(map[string]any)
			b = append(b, minimalValue(rs, root, 1)...)
		}
		if k >= required {
			if required > 0 {
				b = append(b, ',')
			}
			b = append(b, mustJSON(name)...)
			b = append(b, ':')
			b = append(b, v...)
		}
		return append(b, '}')
	}
	return minimal
}

// distinctValue is a value schema s accepts that differs from its minimal
// value and from the distinct values of indexes 1 to i-1: the string of i
// (padded with "a" to minLength), the minimal number plus i, an enum's i-th
// value, true for i = 1. It is false when s admits none.
func distinctValue(s map[string]any, i int) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	if _, ok := s["const"]; ok {
		return nil, false
	}
	if e, ok := s["enum"].([]any); ok {
		if i < len(e) {
			v := mustJSON(e[i])
			return v, !bytes.Equal(v, mustJSON(e[0]))
		}
		return nil, false
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "not", "if", "$ref"} {
		if _, ok := s[k]; ok {
			return nil, false
		}
	}
	switch typ := schemaType(s); typ {
	case "string":
		if _, ok := s["pattern"]; ok {
			return nil, false
		}
		if _, ok := s["format"]; ok {
			return nil, false
		}
		v := strconv.Itoa(i)
		if lo, ok := s["minLength"].(float64); ok && float64(len(v)) < lo {
			v = strings.Repeat("a", int(lo)-len(v)) + v
		}
		if hi, ok := s["maxLength"].(float64); ok && float64(len(v)) > hi {
			return nil, false
		}
		return mustJSON(v), true
	case "integer", "number":
		if _, ok := s["multipleOf"]; ok {
			return nil, false
		}
		v, err := strconv.ParseFloat(string(minimalNumber(s, typ == "integer")), 64)
		if err != nil {
			return nil, false
		}
		v += float64(i)
		if hi, ok := s["maximum"].(float64); ok && v > hi {
			return nil, false
		}
		if hi, ok := s["exclusiveMaximum"].(float64); ok && v >= hi {
			return nil, false
		}
		if lo, ok := s["minimum"].(float64); ok && v < lo {
			return nil, false
		}
		return strconv.AppendFloat(nil, v, 'f', -1, 64), true
	case "boolean":
		return []byte("true"), i == 1
	}
	return nil, false
}
