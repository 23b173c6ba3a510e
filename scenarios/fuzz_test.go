package scenarios

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad writes arbitrary bytes to a file and loads it, as `validate`
// does: Load must return a scenario or an error naming the file.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("duration = \"1m\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\" } ]\n[services.s]\n[tools.t]\nservice = \"s\"\n[[strategy]]\nname = \"a\"\n"))
	f.Add([]byte("a = [[[[[[[[[[[[1]]]]]]]]]]]]\n"))
	f.Add([]byte("[workload]\nsessions = 1e9\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.toml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		sc, err := Load(path)
		switch {
		case err != nil && !strings.Contains(err.Error(), path):
			t.Fatalf("the error does not name the file: %v", err)
		case err == nil && (sc == nil || sc.Source != path):
			t.Fatalf("Load = %v, nil", sc)
		}
	})
}

// FuzzEmpirical feeds arbitrary bytes as an empirical distribution's file:
// loading must keep every sample within the bounds, or say which line is wrong.
func FuzzEmpirical(f *testing.F) {
	f.Add([]byte("412ms\n# comment\n\n380\n1.2s\n"), false)
	f.Add([]byte("1e300\n"), false)
	f.Add([]byte("3\n4.5\n"), true)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, tokens bool) {
		if err := os.WriteFile(filepath.Join(dir, "values.txt"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		key := "latency = { dist = \"empirical\", file = \"values.txt\" }\n[tools.t]\nservice = \"s\"\n"
		if tokens {
			key = "[tools.t]\nservice = \"s\"\ntokens = { dist = \"empirical\", file = \"values.txt\" }\n"
		}
		src := "duration = \"1m\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\" } ]\n[services.s]\n" + key + "[[strategy]]\nname = \"a\"\n"
		path := filepath.Join(dir, "s.toml")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		sc, err := Load(path)
		var e *Error
		switch {
		case err != nil && !errors.As(err, &e):
			t.Fatalf("Load = %v; want an *Error", err)
		case err != nil:
			return
		case tokens:
			for _, v := range sc.Tools[0].Tokens.Samples {
				if !(v >= 0 && v <= MaxTokensPerCall) {
					t.Fatalf("sample %v out of bounds", v)
				}
			}
		default:
			for _, v := range sc.Services[0].Latency.Samples {
				if v < 0 || v > MaxDuration {
					t.Fatalf("sample %v out of bounds", v)
				}
			}
		}
	})
}

// FuzzParseRate: any string gives a finite rate ≥ 0 or an error.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"10/s", "600/m", "1e400/s", "-1/s", "NaN/m", " 2.5 / second ", "10_000/h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err == nil && !(r >= 0 && !math.IsInf(r, 0)) {
			t.Fatalf("ParseRate(%q) = %v", s, r)
		}
	})
}

// FuzzBuiltin: any name gives a built-in scenario or an error, and never
// reaches outside the embedded files.
func FuzzBuiltin(f *testing.F) {
	for _, s := range []string{"tier3", "tier3.toml", "../scenarios/tier3", "", "/", "testdata/full"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		sc, err := Builtin(name)
		if err == nil && !strings.HasPrefix(sc.Source, "builtin:") {
			t.Fatalf("Builtin(%q) came from %s", name, sc.Source)
		}
	})
}
