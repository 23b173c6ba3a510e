package live

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/hostile"
	"github.com/simbench/simbench/results"
)

// memberFolder writes fleet member 0 of 2 into a new folder: 40 turns of
// 10 to 400 ms, 2 calls each.
func memberFolder(t *testing.T) string {
	t.Helper()
	var turns, calls []time.Duration
	for i := range 40 {
		turns = append(turns, time.Duration(10+10*i)*time.Millisecond)
		calls = append(calls, time.Duration(5+i)*time.Millisecond, time.Duration(7+i)*time.Millisecond)
	}
	dir := t.TempDir()
	if err := WriteMember(dir, fakeMember(0, 2, turns, calls)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Every damaged or replaced file of a fleet member's folder (its
// results.json and its histogram log) is refused by ReadMember, within
// the guard's time and memory, with a message naming the file.
func TestHostileMemberFolders(t *testing.T) {
	type target struct {
		file string
		hs   []hostile.Damage
	}
	for _, tg := range []target{{results.ResultsFile, append(append([]hostile.Damage{}, hostile.Files...), hostileMembers...)}, {MemberHistFile, append(append([]hostile.Damage{}, hostile.Files...), hostileHistLogs...)}} {
		for _, h := range tg.hs {
			t.Run(tg.file+"/"+h.Name, func(t *testing.T) {
				dir := memberFolder(t)
				path := filepath.Join(dir, tg.file)
				good, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ReadMember(dir); err != nil {
					t.Fatal(err)
				}
				h.Spoil(t, path, good)
				err = hostile.Guarded(t, func() error { _, err := ReadMember(dir); return err })
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), h.Want) {
					t.Errorf("err = %v, want one naming %s and saying %q", err, path, h.Want)
				}
			})
		}
	}
}

// The damages only a member's histogram log can have: intervals of a
// layout that takes tens of megabytes each, many of them.
var hostileHistLogs = []hostile.Damage{
	hostile.D("huge-histograms", func(t *testing.T, path string, good []byte) {
		h, err := hdrhistogram.Decode(hostile.HugeHistogram(t))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := collect.WriteHDRLog(&buf, "huge", "turn:shared", []*hdrhistogram.Histogram{h}); err != nil {
			t.Fatal(err)
		}
		// The interval 100 times over (encoding it anew each time is slow).
		lines := bytes.SplitAfter(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
		interval := append(lines[len(lines)-1], '\n')
		hostile.WriteFile(t, path, append(buf.Bytes(), bytes.Repeat(interval, 99)...))
	}, "another layout"),
}

// The damages only a member's results can have: figures that contradict
// the histograms beside them, or a fleet size out of range.
var hostileMembers = []hostile.Damage{
	hostile.D("turns-edited", func(t *testing.T, path string, good []byte) {
		hostile.EditJSON(t, path, good, "strategies.turns", "999999")
	}, "turns, its turn histogram"),
	hostile.D("calls-edited", func(t *testing.T, path string, good []byte) {
		hostile.EditJSON(t, path, good, "strategies.calls", "81")
	}, "calls, its call histogram"),
	hostile.D("negative", func(t *testing.T, path string, good []byte) {
		hostile.EditJSON(t, path, good, "strategies.turns", "-1")
	}, "a count is ≥ 0"),
	hostile.D("nan", func(t *testing.T, path string, good []byte) {
		hostile.EditJSON(t, path, good, "strategies.turn_latency_ms.p95", "NaN")
	}, "invalid character"),
	hostile.D("1e308", func(t *testing.T, path string, good []byte) {
		hostile.EditJSON(t, path, good, "strategies.turn_latency_ms.max", "1e308")
	}, "want at most"),
	hostile.D("fleet-of-negative", func(t *testing.T, path string, good []byte) { hostile.EditJSON(t, path, good, "fleet.of", "-1") }, "fleet.of"),
	hostile.D("fleet-of-2^62", func(t *testing.T, path string, good []byte) {
		hostile.EditJSON(t, path, good, "fleet.of", "4611686018427387904")
	}, "fleet.of"),
	hostile.D("fleet-of-1e9", func(t *testing.T, path string, good []byte) {
		hostile.EditJSON(t, path, good, "fleet.of", "1000000000")
	}, "fleet.of"),
	hostile.D("member-out-of-range", func(t *testing.T, path string, good []byte) { hostile.EditJSON(t, path, good, "fleet.member", "2") }, "fleet.member"),
}
