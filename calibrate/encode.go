package calibrate

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/BurntSushi/toml"
)

// The scenario calibrate writes is TOML with a comment on every figure.
// Its keys and string values go through the TOML library's encoder
// (quote, tomlKey), never through string concatenation; numbers are
// checked finite and within the scenario bounds before they are written;
// and every string put into a line (a comment's trace path or name) is
// cleaned of control characters first (tomlWriter.p), so that nothing
// read from a trace can start a new line, a key or a table. checkKeys
// then decodes what was written and compares its tables with the ones
// meant.

// quote writes s as a TOML basic string, through the encoder: quotes,
// backslashes and control characters escaped. Invalid UTF-8 is replaced.
func quote(s string) string {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(map[string]string{"v": strings.ToValidUTF8(s, "\uFFFD")}); err != nil {
		panic(fmt.Sprintf("calibrate: encoding a string: %v", err)) // a string always encodes
	}
	return strings.TrimSpace(strings.TrimPrefix(b.String(), "v = "))
}

// tomlKey writes one key, bare when it can be and quoted otherwise, as the
// encoder writes keys.
func tomlKey(s string) string { return toml.Key{strings.ToValidUTF8(s, "\uFFFD")}.String() }

// clean makes text from a trace safe inside a comment or a line: control
// characters (newlines among them) become their Go escapes, so the text
// stays on its line.
func clean(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) && strings.ToValidUTF8(s, "") == s {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if unicode.IsControl(r) {
			q := fmt.Sprintf("%+q", string(r))
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkKeys decodes the scenario written and checks that it holds the
// top-level keys, services and tools meant, and no others: what a name
// from a trace could have injected.
func checkKeys(data []byte, r *Result) error {
	var doc struct {
		Services map[string]any
		Tools    map[string]any
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		return err
	}
	top := map[string]bool{}
	for _, k := range md.Keys() {
		top[k[0]] = true
	}
	allowed := []string{"name", "description", "seed", "duration", "workload", "services", "tools", "strategy"}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("the scenario holds the key %q, which calibrate does not write", k)
		}
	}
	var services, tools []string
	for _, s := range r.Services {
		services = append(services, s.Name)
	}
	for _, t := range r.Tools {
		tools = append(tools, t.Name)
	}
	if got := slices.Sorted(maps.Keys(doc.Services)); !slices.Equal(got, slices.Sorted(slices.Values(services))) {
		return fmt.Errorf("the scenario's services are %q; want %q", got, services)
	}
	if got := slices.Sorted(maps.Keys(doc.Tools)); !slices.Equal(got, slices.Sorted(slices.Values(tools))) {
		return fmt.Errorf("the scenario's tools are %q; want %q", got, tools)
	}
	return nil
}
