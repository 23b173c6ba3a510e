package wire

import (
	"encoding/json"
	"testing"
)

// TestGenericBodyAsEncodingJSON checks genericBody against encoding/json
// marshalling the same fields, on strings that need no escape and on
// strings that do (quotes, HTML characters, control bytes, non-ASCII,
// invalid UTF-8, U+2028).
func TestGenericBodyAsEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "search", "/v1/tools/search", `a"b\c`, "<x>", "a&b", "tab\there", "é", "\xff\xfe", "line\u2028sep", "del\x7f"} {
		want, err := json.Marshal(struct {
			OK      bool   `json:"ok"`
			ID      string `json:"id"`
			Service string `json:"service"`
			Path    string `json:"path"`
			Tokens  int64  `json:"tokens"`
		}{true, "7" + s, "tool" + s, "/search" + s, -12})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, '\n')
		if got := genericBody("7"+s, "tool"+s, "/search"+s, -12); string(got) != string(want) {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
	}
}
