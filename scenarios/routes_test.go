package scenarios

import (
	"strings"
	"testing"
)

// TestResourceFromKey checks the forms tools.NAME.resource_from takes and
// that every bad value is reported at once with its file, line and key.
func TestResourceFromKey(t *testing.T) {
	const head = "name = \"a\"\nduration = \"1m\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"w\", count = 1 } ]\n[[strategy]]\nname = \"x\"\n[services.s]\nrpm = 60\n"
	tool := func(name, kind, from string) string {
		return "[tools." + name + "]\nservice = \"s\"\nkind = \"" + kind + "\"\nresource_from = " + from + "\n"
	}
	for _, from := range []string{"path:2", "json:doc_id", "header:X-Doc-Id"} {
		sc, err := Parse("a.toml", []byte(head+tool("w", "write", `"`+from+`"`)))
		if err != nil {
			t.Fatalf("%s: %v", from, err)
		}
		if got := sc.Tool("w").ResourceFrom.String(); got != from {
			t.Errorf("resource_from %q, want %q", got, from)
		}
	}
	// The tables start on lines 10, 14, 18, 22, 26 and 30; the key is the
	// 4th line of each.
	src := head + tool("w", "write", `"path:0"`) + tool("b", "write", `"cookie:id"`) + tool("c", "write", `"json:"`) +
		tool("d", "read", `"path:1"`) + tool("e", "write", "3") + tool("f", "write", `"path:x"`)
	_, err := Parse("a.toml", []byte(src))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`a.toml:13:1: tools.w.resource_from: "path:0": the path segment must be a whole number from 1`,
		`a.toml:17:1: tools.b.resource_from: "cookie:id" is not "path:N", "json:FIELD" or "header:NAME"`,
		`a.toml:21:1: tools.c.resource_from: "json:" is not`,
		`a.toml:25:1: tools.d.resource_from: only applies to kind = "write"`,
		`a.toml:29:1: tools.e.resource_from:`,
		`a.toml:33:1: tools.f.resource_from: "path:x": the path segment`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n%v\nwant it to say %q", err, want)
		}
	}
}
