package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		hs   []hostile
	}
	for _, tg := range []target{{results.ResultsFile, append(append([]hostile{}, hostileFiles...), hostileMembers...)}, {MemberHistFile, append(append([]hostile{}, hostileFiles...), hostileHistLogs...)}} {
		for _, h := range tg.hs {
			t.Run(tg.file+"/"+h.name, func(t *testing.T) {
				dir := memberFolder(t)
				path := filepath.Join(dir, tg.file)
				good, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ReadMember(dir); err != nil {
					t.Fatal(err)
				}
				h.spoil(t, path, good)
				err = guarded(t, func() error { _, err := ReadMember(dir); return err })
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), h.want) {
					t.Errorf("err = %v, want one naming %s and saying %q", err, path, h.want)
				}
			})
		}
	}
}
