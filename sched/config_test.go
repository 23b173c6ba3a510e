package sched

import (
	"strings"
	"testing"
)

// TestNewNamesTheFirstBadServiceByName checks that New, given several
// invalid services, names the same one every time: the first by name, not
// whichever map order reaches first.
func TestNewNamesTheFirstBadServiceByName(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{
		"c": {MaxInFlight: -1},
		"a": {Headroom: 2},
		"b": {RequestsPerMinute: -5},
	}}
	counts := map[string]int{}
	for range 200 {
		_, err := New(cfg)
		if err == nil {
			t.Fatal("New accepted three invalid services")
		}
		for _, name := range []string{"a", "b", "c"} {
			if strings.Contains(err.Error(), `service "`+name+`"`) {
				counts[name]++
			}
		}
	}
	if counts["a"] != 200 {
		t.Errorf("200 calls named a %d times, b %d, c %d; want a every time", counts["a"], counts["b"], counts["c"])
	}
}
