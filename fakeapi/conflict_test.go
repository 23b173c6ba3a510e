package fakeapi

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/spec"
)

// TestModelConflicts walks one resource through writes that overlap and
// writes that do not, at exact times, with every overlap detected. Every
// request takes 1 s.
func TestModelConflicts(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: time.Second}, Faults: spec.Faults{Conflict: 1}}})
	write := func(at time.Duration, res string) Decision {
		return m.Arrive(at, Request{Method: "PUT", Path: "/x", Resource: res, Write: true})
	}
	tests := []struct {
		name string
		at   time.Duration
		req  Request
		want Kind
	}{
		// a holds doc-1 from 0 to 1 s.
		{"a: first write", 0, Request{Method: "PUT", Path: "/doc-1", Write: true}, KindOK},
		{"b: a read of doc-1 during a", 100 * ms, Request{Method: "GET", Path: "/doc-1"}, KindOK},
		{"c: a write to doc-1 during a", 500 * ms, Request{Method: "POST", Path: "/x", Resource: "/doc-1", Write: true}, KindConflict},
		{"d: a write to doc-2 during a", 500 * ms, Request{Method: "PUT", Path: "/doc-2", Write: true}, KindOK},
		{"e: a write to doc-1 a nanosecond before a ends", time.Second - 1, Request{Method: "PUT", Path: "/doc-1", Write: true}, KindConflict},
	}
	got := map[string]Decision{}
	for _, tt := range tests {
		d := m.Arrive(tt.at, tt.req)
		got[tt.name[:1]] = d
		if d.Kind != tt.want {
			t.Fatalf("%s at %v: kind %v, want %v", tt.name, tt.at, d.Kind, tt.want)
		}
		if !d.Admitted() || d.Latency != time.Second || d.WriteRace {
			t.Fatalf("%s: %+v, want admitted with latency 1s and no race", tt.name, d)
		}
		if wantStatus := map[Kind]int{KindOK: 200, KindConflict: 409}[tt.want]; d.Status != wantStatus {
			t.Fatalf("%s: status %d, want %d", tt.name, d.Status, wantStatus)
		}
	}
	// a ends at 1 s. The losers c (until 1.5 s) and e (until 2 s) hold
	// nothing: a write arriving at that instant wins.
	m.Finish(time.Second, got["a"].ID, false)
	f := write(time.Second, "/doc-1")
	if f.Kind != KindOK {
		t.Fatalf("f: a write to doc-1 as a ends, with losers still in service: %v, want ok", f.Kind)
	}
	m.Finish(1500*ms, got["c"].ID, false)
	// f holds doc-1 until 2 s, whatever the losers' ends.
	if g := write(1500*ms, "/doc-1"); g.Kind != KindConflict {
		t.Fatalf("g: a write to doc-1 during f: %v, want conflict", g.Kind)
	}
	s := m.Stats()
	if s.Conflicts != 3 || s.WriteRaces != 0 || s.Accepted != 7 || s.Completed != 1 {
		t.Fatalf("stats: %d conflicts, %d races, %d accepted, %d completed; want 3, 0, 7, 1", s.Conflicts, s.WriteRaces, s.Accepted, s.Completed)
	}
	if s.Errors["server_error"] != 0 {
		t.Fatalf("a conflict counted as a server error: %v", s.Errors)
	}
}

// TestModelConflictOff checks that without conflict detection the same
// overlap is a race, as before.
func TestModelConflictOff(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: time.Second}}})
	m.Arrive(0, Request{Path: "/doc-1", Write: true})
	if d := m.Arrive(500*ms, Request{Path: "/doc-1", Write: true}); d.Kind != KindOK || !d.WriteRace {
		t.Fatalf("overlapping write without conflict detection: %+v, want ok and a race", d)
	}
	if s := m.Stats(); s.Conflicts != 0 || s.WriteRaces != 1 {
		t.Fatalf("conflicts %d, races %d; want 0, 1", s.Conflicts, s.WriteRaces)
	}
}

// TestModelConflictRate checks that a rate below 1 detects about that
// share of overlaps, that the overlaps it lets through are races, and that
// its draws leave the latencies and faults of other requests unchanged.
func TestModelConflictRate(t *testing.T) {
	cfg := ServiceConfig{Config: spec.Config{Name: "s", Latency: spec.Dist[time.Duration]{Kind: spec.DistLognormal, P50: 50 * ms, P95: 200 * ms}, Faults: spec.Faults{ErrorRate: 0.1}}}
	with := cfg
	with.Faults.Conflict = 0.5
	a, err := NewModel(cfg, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewModel(with, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	// One long write holds the resource; 4000 short ones overlap it.
	a.Arrive(0, Request{Path: "/hold", Write: true})
	b.Arrive(0, Request{Path: "/hold", Write: true})
	const n = 4000
	for i := range n {
		da := a.Arrive(time.Duration(i), Request{Path: "/hold", Write: true})
		db := b.Arrive(time.Duration(i), Request{Path: "/hold", Write: true})
		if da.Latency != db.Latency {
			t.Fatalf("write %d: latency %v with conflicts, %v without: the conflict draws moved the latency stream", i, db.Latency, da.Latency)
		}
		if da.Kind == KindServerError && db.Kind != KindServerError || da.Kind != KindServerError && db.Kind == KindServerError {
			t.Fatalf("write %d: kind %v with conflicts, %v without: the conflict draws moved the fault stream", i, db.Kind, da.Kind)
		}
	}
	s := b.Stats()
	// Server errors are drawn first and never conflict: 0.9 × 0.5 of the
	// overlaps conflict, within 5 standard deviations.
	want := 0.45 * n
	if sd := 5 * 31.5; float64(s.Conflicts) < want-sd || float64(s.Conflicts) > want+sd {
		t.Fatalf("%d conflicts of %d overlaps at rate 0.5, want about %v", s.Conflicts, n, want)
	}
	if s.WriteRaces+s.Conflicts != n {
		t.Fatalf("%d races + %d conflicts, want %d: every overlap is one or the other", s.WriteRaces, s.Conflicts, n)
	}
}

func TestConflictRateValidated(t *testing.T) {
	err := ServiceConfig{Config: spec.Config{Name: "s", Faults: spec.Faults{Conflict: 1.5}}}.Validate()
	if err == nil || !strings.Contains(err.Error(), "faults.conflict: is 1.5; it must be a fraction in [0, 1]") {
		t.Fatalf("Validate = %v, want conflict outside [0, 1]", err)
	}
}

// TestServeConflict checks that the HTTP server answers the loser of two
// overlapping writes with 409 and a JSON error body, in each API style
// (writes go to the generic tool paths, which every style serves).
func TestServeConflict(t *testing.T) {
	tests := []struct {
		api                spec.APIStyle
		method, path, body string
	}{
		{spec.APIGeneric, "PUT", "/resources/doc", `{}`},
		{spec.APIOpenAI, "PUT", "/resources/doc", `{}`},
		{spec.APIAnthropic, "POST", "/tools/save", `{"resource":"doc"}`},
	}
	for _, tt := range tests {
		t.Run(string(tt.api), func(t *testing.T) {
			s, c := startServer(t, ServerConfig{Services: []ServiceConfig{{
				Config: spec.Config{Name: "tool", API: tt.api, Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: time.Second},
					Faults: spec.Faults{Conflict: 1}},
			}}})
			url := s.URL("tool") + tt.path
			var wg sync.WaitGroup
			var first response
			wg.Go(func() { first = do(t, c, tt.method, url, tt.body, WriteHeader, "doc") })
			eventually(t, "the first write in service", func() bool { return s.Stats().Services["tool"].InFlight == 1 })
			second := do(t, c, tt.method, url, tt.body, WriteHeader, "doc")
			wg.Wait()
			if first.status != http.StatusOK || second.status != http.StatusConflict {
				t.Fatalf("statuses %d, %d; want 200 for the first write, 409 for the overlapping one", first.status, second.status)
			}
			e, ok := second.body["error"].(map[string]any)
			if msg, _ := e["message"].(string); !ok || !strings.Contains(msg, "Conflict") {
				t.Fatalf("409 body %v, want an error object whose message says Conflict", second.body)
			}
			if st := s.Stats().Services["tool"]; st.Conflicts != 1 || st.WriteRaces != 0 {
				t.Fatalf("stats: %d conflicts, %d races; want 1, 0", st.Conflicts, st.WriteRaces)
			}
		})
	}
}

// TestConflictProperty drives random writes, reads, finishes and cancels
// over three resources with every overlap detected, and checks each
// decision against a reference kept here: a write conflicts exactly when
// a write to its resource that did not conflict is in service, and never
// races.
func TestConflictProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m, err := NewModel(ServiceConfig{Config: spec.Config{Name: "s", Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: time.Second}, Faults: spec.Faults{Conflict: 1}}}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		type live struct {
			id     ID
			res    string
			holder bool // a write that did not conflict
		}
		var inService []live
		var conflicts int64
		now := time.Duration(0)
		for range rapid.IntRange(1, 200).Draw(t, "steps") {
			now += time.Duration(rapid.IntRange(0, 3).Draw(t, "gap")) * ms
			if len(inService) > 0 && rapid.Bool().Draw(t, "end") {
				i := rapid.IntRange(0, len(inService)-1).Draw(t, "which")
				if rapid.Bool().Draw(t, "cancel") {
					m.Cancel(now, inService[i].id)
				} else {
					m.Finish(now, inService[i].id, false)
				}
				inService = append(inService[:i], inService[i+1:]...)
				continue
			}
			res := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "res")
			write := rapid.Bool().Draw(t, "write")
			held := false
			for _, l := range inService {
				held = held || (l.holder && l.res == res)
			}
			d := m.Arrive(now, Request{Path: "/" + res, Write: write})
			want := KindOK
			if write && held {
				want = KindConflict
				conflicts++
			}
			if d.Kind != want || d.WriteRace || !d.Admitted() {
				t.Fatalf("at %v: %s of %s with a holder %v: kind %v race %v, want %v and no race", now, map[bool]string{true: "write", false: "read"}[write], res, held, d.Kind, d.WriteRace, want)
			}
			inService = append(inService, live{id: d.ID, res: res, holder: write && want == KindOK})
		}
		if got := m.Stats().Conflicts; got != conflicts {
			t.Fatalf("stats count %d conflicts, the reference %d", got, conflicts)
		}
	})
}
