package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const gateBaseline = `goos: linux
pkg: github.com/simbench/simbench
BenchmarkScenario/tier3/bounded-64-2  1  171893353 ns/op  3449 p95-turn-ms  0 429s/op  146.0 goodput/s
BenchmarkScenario/tier3/unbounded-2   1  1237168634 ns/op  1030 p95-turn-ms  328447 429s/op  166.8 goodput/s
`

// writeBench writes benchmark output to a file in a fresh directory.
func writeBench(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGateExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		new      string
		wantCode int      // 0: passes
		wantOut  []string // regular expressions
	}{
		{
			name: "same figures, 4 cores",
			new: `pkg: github.com/simbench/simbench
BenchmarkScenario/tier3/bounded-64-4  1  160000000 ns/op  3449 p95-turn-ms  0 429s/op  146.0 goodput/s
BenchmarkScenario/tier3/unbounded-4   1  1200000000 ns/op  1030 p95-turn-ms  328447 429s/op  166.8 goodput/s
`,
			wantOut: []string{
				`ns/op +171893353 +160000000 +-6\.92% +undecided: not enough runs \(n=1, need 6\)`,
				`(?m)^gate: 0 regressions, 0 improvements, 6 unchanged, 2 undecided \(need ≥6 runs\)$`,
			},
		},
		{
			name: "p95 up 5% and 429s up",
			new: `pkg: github.com/simbench/simbench
BenchmarkScenario/tier3/bounded-64-2  1  171893353 ns/op  3621 p95-turn-ms  12 429s/op  146.0 goodput/s
BenchmarkScenario/tier3/unbounded-2   1  1237168634 ns/op  1030 p95-turn-ms  328447 429s/op  166.8 goodput/s
`,
			wantCode: exitRegression,
			wantOut: []string{
				`(?m)^simbench\.BenchmarkScenario/tier3/bounded-64 +p95-turn-ms +3449 +3621 +\+4\.99% +REGRESSION: beyond limit \+2%$`,
				`(?m)^simbench\.BenchmarkScenario/tier3/bounded-64 +429s/op +0 +12 +\+∞ +REGRESSION: beyond limit: may not rise$`,
				`(?m)^gate: 2 regressions, 0 improvements, 4 unchanged, 2 undecided \(need ≥6 runs\)$`,
			},
		},
		{
			name: "benchmark missing",
			new: `pkg: github.com/simbench/simbench
BenchmarkScenario/tier3/bounded-64-2  1  171893353 ns/op  3449 p95-turn-ms  0 429s/op  146.0 goodput/s
`,
			wantCode: exitInvalid,
			wantOut:  []string{`(?m)^simbench\.BenchmarkScenario/tier3/unbounded +\(all\) +- +- +- +MISSING: benchmark not in .*new\.txt$`},
		},
		{
			name: "metric missing",
			new: `pkg: github.com/simbench/simbench
BenchmarkScenario/tier3/bounded-64-2  1  171893353 ns/op  3449 p95-turn-ms  146.0 goodput/s
BenchmarkScenario/tier3/unbounded-2   1  1237168634 ns/op  1030 p95-turn-ms  328447 429s/op  166.8 goodput/s
`,
			wantCode: exitInvalid,
			wantOut:  []string{`(?m)^simbench\.BenchmarkScenario/tier3/bounded-64 +429s/op +0 +- +- +MISSING: deterministic unit not in .*new\.txt$`, `, 1 missing\n$`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			cmd := &GateCmd{
				Baseline:  writeBench(t, "baseline.txt", gateBaseline),
				MinChange: "10%",
				File:      writeBench(t, "new.txt", tt.new),
				Stdout:    &out,
			}
			err := cmd.Run()
			if got := codeOf(err); got != tt.wantCode {
				t.Errorf("Run() = %v, exit code %d, want %d\n%s", err, got, tt.wantCode, out.String())
			}
			for _, want := range tt.wantOut {
				if !regexp.MustCompile(want).MatchString(out.String()) {
					t.Errorf("output does not match %s:\n%s", want, out.String())
				}
			}
		})
	}
}

func TestGateInvalidInput(t *testing.T) {
	base := writeBench(t, "baseline.txt", gateBaseline)
	tests := []struct {
		name    string
		cmd     GateCmd
		wantErr string
	}{
		{"empty new file", GateCmd{Baseline: base, File: writeBench(t, "new.txt", "")}, "no benchmark results"},
		{"no new file", GateCmd{Baseline: base, File: filepath.Join(t.TempDir(), "nope.txt")}, "no such file"},
		{"no baseline", GateCmd{Baseline: filepath.Join(t.TempDir(), "nope.txt"), File: base}, "no such file"},
		{"bad line", GateCmd{Baseline: base, File: writeBench(t, "new.txt", "BenchmarkX-2 1 fast ns/op\n")}, "new.txt:1: parsing measurement"},
		{"bad min change", GateCmd{Baseline: base, File: base, MinChange: "ten"}, `--min-change: "ten" is not a percentage`},
		{"zero min change", GateCmd{Baseline: base, File: base, MinChange: "0%"}, "--min-change"},
		{"six NaN runs", GateCmd{Baseline: base, File: writeBench(t, "new.txt", strings.Repeat("BenchmarkX-2 1 NaN ns/op\n", 6))},
			"new.txt:1: BenchmarkX-2 reports NaN ns/op"},
		{"one NaN among six", GateCmd{Baseline: base, File: writeBench(t, "new.txt", strings.Repeat("BenchmarkX-2 1 5 ns/op\n", 5)+"BenchmarkX-2 1 NaN ns/op\n")},
			"new.txt:6: BenchmarkX-2 reports NaN ns/op"},
		{"infinite 429s", GateCmd{Baseline: base, File: writeBench(t, "new.txt", "BenchmarkX-2 1 5 ns/op -Inf 429s/op\n")},
			"new.txt:1: BenchmarkX-2 reports -Inf 429s/op"},
		{"zero iterations", GateCmd{Baseline: base, File: writeBench(t, "new.txt", "BenchmarkX-2 0 5 ns/op\n")}, "new.txt:1: BenchmarkX-2 ran 0 iterations"},
		{"negative iterations", GateCmd{Baseline: base, File: writeBench(t, "new.txt", "BenchmarkX-2 1 5 ns/op\nBenchmarkX-2 -3 5 ns/op\n")},
			"new.txt:2: BenchmarkX-2 ran -3 iterations"},
		{"NaN in the baseline", GateCmd{Baseline: writeBench(t, "baseline.txt", "BenchmarkX-2 1 +Inf ns/op\n"), File: base}, "baseline.txt:1: BenchmarkX-2 reports +Inf ns/op"},
		{"NaN min change", GateCmd{Baseline: base, File: base, MinChange: "NaN"}, "--min-change"},
		{"infinite min change", GateCmd{Baseline: base, File: base, MinChange: "Inf%"}, "--min-change"},
		{"negative 429s", GateCmd{Baseline: base, File: writeBench(t, "new.txt", strings.Replace(gateBaseline, " 0 429s/op", " -5 429s/op", 1))},
			"simbench.BenchmarkScenario/tier3/bounded-64: 429s/op is -5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			tt.cmd.Stdout = &out
			if tt.cmd.MinChange == "" {
				tt.cmd.MinChange = "10%"
			}
			err := tt.cmd.Run()
			if codeOf(err) != exitInvalid || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Run() = %v (exit %d), want exit %d and %q", err, codeOf(err), exitInvalid, tt.wantErr)
			}
		})
	}
}

func TestGateReadsStdin(t *testing.T) {
	var out bytes.Buffer
	cmd := &GateCmd{
		Baseline:  writeBench(t, "baseline.txt", gateBaseline),
		MinChange: "10",
		File:      "-",
		Stdin:     strings.NewReader(gateBaseline),
		Stdout:    &out,
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("Run() = %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "gate: 0 regressions") {
		t.Errorf("output:\n%s", out.String())
	}
}

// codeOf is the exit code main would use for err; 0 for nil.
func codeOf(err error) int {
	if err == nil {
		return 0
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return -1
}
