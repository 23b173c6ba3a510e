package fakeapi

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/spec"
)

// nestedDrive offers each key's arrivals (key -> arrival instants, each
// list in time order) to m, finishing every admission at once, and returns
// the admission instants by key and one 429 decision per key.
func nestedDrive(t *testing.T, m *Model, arrivals map[string][]time.Duration) (map[string][]time.Duration, map[string]Decision) {
	t.Helper()
	type arrival struct {
		at  time.Duration
		key string
	}
	var all []arrival
	for k, ts := range arrivals {
		for _, at := range ts {
			all = append(all, arrival{at, k})
		}
	}
	// In time order, the keys' order breaking ties (none in these tests).
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && (all[j].at < all[j-1].at || all[j].at == all[j-1].at && all[j].key < all[j-1].key); j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	admitted := map[string][]time.Duration{}
	refused := map[string]Decision{}
	for _, a := range all {
		d := m.Arrive(a.at, Request{Client: a.key, Key: a.key})
		switch {
		case d.Admitted():
			admitted[a.key] = append(admitted[a.key], a.at)
			m.Finish(a.at, d.ID, false)
		case d.Kind == KindRateLimited:
			refused[a.key] = d
		default:
			t.Fatalf("%s at %v: %+v, want admitted or 429", a.key, a.at, d)
		}
	}
	return admitted, refused
}

// every returns the instants from+i·gap below end.
func every(from, gap, end time.Duration) []time.Duration {
	var ts []time.Duration
	for at := from; at < end; at += gap {
		ts = append(ts, at)
	}
	return ts
}

// countIn counts the instants of ts in [lo, hi).
func countIn(ts []time.Duration, lo, hi time.Duration) int {
	n := 0
	for _, at := range ts {
		if at >= lo && at < hi {
			n++
		}
	}
	return n
}

// nestedConfig is an organisation of 1,000 requests/min with project
// research at 90/min and keys at 60/min each in it.
func nestedConfig(api spec.APIStyle, keys ...string) ServiceConfig {
	c := spec.Config{Name: "api", RPM: 1000, Headers: spec.HeadersOpenAI, API: api,
		Projects: []spec.Project{{Name: "research", RPM: 90}}}
	for _, k := range keys {
		c.Keys = append(c.Keys, spec.Key{Key: k, RPM: 60, Project: "research"})
	}
	return ServiceConfig{Config: c}
}

// TestNestedLightKeyServed: two keys at 60 requests/min under a project of
// 90, a heavy key offering 600/min and a light one 20/min, for ten
// minutes. Each bucket holds one minute's worth. The heavy key's own
// bucket binds: it admits its 60 at once and then one a second, each the
// instant its credit is whole (an arrival falls on every whole second), so
// floor(60 + 599.9) = 659 in all and 60 in each whole minute past the
// first. The light key's 20/min and the heavy key's 60 leave the project
// 10/min of room, so it never binds: the light key loses nothing and every
// 429 names the heavy key's own limit; admissions stay within the
// project's bucket, 90 + 90/min·t.
func TestNestedLightKeyServed(t *testing.T) {
	m := newTestModel(t, nestedConfig(spec.APIOpenAI, "sk-heavy", "sk-light"))
	const end = 10 * time.Minute
	admitted, refused := nestedDrive(t, m, map[string][]time.Duration{
		"sk-heavy": every(0, 100*ms, end),
		"sk-light": every(1500*ms, 3*time.Second, end),
	})
	heavy, light := admitted["sk-heavy"], admitted["sk-light"]
	if len(heavy) != 659 || len(light) != 200 {
		t.Fatalf("admitted heavy %d, light %d; want 659 and all 200", len(heavy), len(light))
	}
	for minute := time.Minute; minute < end; minute += time.Minute {
		h, l := countIn(heavy, minute, minute+time.Minute), countIn(light, minute, minute+time.Minute)
		if h != 60 || l != 20 || h+l > 90 {
			t.Fatalf("minute from %v: heavy %d, light %d; want 60 and 20, at most 90 in all", minute, h, l)
		}
	}
	last := heavy[len(heavy)-1]
	if bound := 90 + 1.5*last.Seconds(); float64(len(heavy)+len(light)) > bound {
		t.Fatalf("%d admissions by %v, above the project's bucket %v", len(heavy)+len(light), last, bound)
	}
	s := m.Stats()
	want := []KeyStats{
		{Key: "sk-heavy", Project: "research", Admitted: 659, RateLimited: 6000 - 659, RateLimitedBy: map[string]int64{"key": 6000 - 659, "project": 0, "organization": 0}},
		{Key: "sk-light", Project: "research", Admitted: 200, RateLimitedBy: map[string]int64{"key": 0, "project": 0, "organization": 0}},
	}
	if fmt.Sprint(s.Keys) != fmt.Sprint(want) {
		t.Fatalf("Stats.Keys = %+v\nwant %+v", s.Keys, want)
	}
	d := refused["sk-heavy"]
	if d.Level != LevelKey || d.Scope != "sk-heavy" || d.Limit != LimitRPM {
		t.Fatalf("heavy key's 429: level %v scope %q limit %v; want key sk-heavy rpm", d.Level, d.Scope, d.Limit)
	}
	if msg := string(d.RejectionBody(&m.cfg, 429)); !strings.Contains(msg, "Rate limit reached for requests per min (RPM) for API key ...eavy on service api: Limit 60, Remaining 0.") {
		t.Fatalf("429 body %s does not name the key's limit", msg)
	}
}

// TestNestedProjectBinds: two heavy keys at 60 requests/min under a
// project of 90 (each offering 600/min, half a tick apart). Together the
// keys could take 120/min; the project's bucket (90, refilled at 1.5/s)
// empties after 90 + 1.5t = 20t requests, at t ≈ 4.9 s, while each key
// has spent about 46 of its own 60 + t, so from then on only the project
// binds: every 429 names it, and the admissions are its bucket's,
// floor(90 + 1.5·t) by t (one fewer when a unit is whole between the last
// arrivals). A unit is whole every 2/3 s, at k·2/3 s, and goes to the
// first arrival then: on a whole second (k ≡ 0 mod 3) and at x.667 s
// (k ≡ 1, next arrival x.7) key a's, at x.333 s (k ≡ 2, next x.35) key
// b's: 60 and 30 of each minute's 90 — a key that asks first takes the
// project's room, within its own limit.
func TestNestedProjectBinds(t *testing.T) {
	for _, api := range []spec.APIStyle{spec.APIOpenAI, spec.APIAnthropic} {
		m := newTestModel(t, nestedConfig(api, "sk-a", "sk-b"))
		const end = 10 * time.Minute
		admitted, refused := nestedDrive(t, m, map[string][]time.Duration{
			"sk-a": every(0, 100*ms, end),
			"sk-b": every(50*ms, 100*ms, end),
		})
		a, b := len(admitted["sk-a"]), len(admitted["sk-b"])
		last := end - 50*ms
		hi := int(math.Floor(90 + 1.5*last.Seconds()))
		if a+b > hi || a+b < hi-1 {
			t.Fatalf("%s: admitted %d + %d = %d, want the project's bucket floor(90 + 1.5·%v) = %d (or one fewer)", api, a, b, a+b, last.Seconds(), hi)
		}
		for minute := time.Minute; minute < end; minute += time.Minute {
			a, b := countIn(admitted["sk-a"], minute, minute+time.Minute), countIn(admitted["sk-b"], minute, minute+time.Minute)
			if a != 60 || b != 30 {
				t.Fatalf("%s: minute from %v: admitted %d and %d, want 60 and 30", api, minute, a, b)
			}
		}
		for _, k := range m.Stats().Keys {
			if k.RateLimitedBy["project"] != k.RateLimited || k.RateLimited == 0 {
				t.Fatalf("%s: %s's 429s by level %v of %d; want every one by the project", api, k.Key, k.RateLimitedBy, k.RateLimited)
			}
		}
		d := refused["sk-a"]
		if d.Level != LevelProject || d.Scope != "research" {
			t.Fatalf("%s: 429 level %v scope %q, want project research", api, d.Level, d.Scope)
		}
		word := map[spec.APIStyle]string{spec.APIOpenAI: "project", spec.APIAnthropic: "workspace"}[api]
		want := fmt.Sprintf("Rate limit reached for requests per min (RPM) in %s research on service api: Limit 90, Remaining 0.", word)
		if msg := string(d.RejectionBody(&m.cfg, 429)); !strings.Contains(msg, want) {
			t.Fatalf("%s: 429 body %s\nwant the message %q", api, msg, want)
		}
	}
}

// TestNestedWithoutProjectsUnchanged: keys without projects keep one level
// each, with the service's limits: two keys each admit the service's
// whole rpm, and a 429 names no level.
func TestNestedWithoutProjectsUnchanged(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "api", RPM: 5, Keys: []spec.Key{{Key: "a"}, {Key: "b"}}}})
	admitted, refused := nestedDrive(t, m, map[string][]time.Duration{"a": every(0, ms, 10*ms), "b": every(0, ms, 10*ms)})
	if len(admitted["a"]) != 5 || len(admitted["b"]) != 5 {
		t.Fatalf("admitted %d and %d, want 5 each", len(admitted["a"]), len(admitted["b"]))
	}
	if d := refused["a"]; d.Level != LevelNone || d.Scope != "" || m.Stats().Keys != nil {
		t.Fatalf("429 level %v scope %q, keys %v; want none without projects", d.Level, d.Scope, m.Stats().Keys)
	}
}

// TestNestedLevelsWithinLimits checks, on random trees of limits (an
// organisation, projects, keys in a project or not) under each limiter and
// random arrivals, that the requests and tokens admitted at every level
// in any window (t-W, t] stay within what the level's limiter promises
// (TestLimiterWindowBound's bounds), counted by a reference that only adds
// up the admissions of the level's keys; and that a 429 names a level of
// the key's own chain.
func TestNestedLevelsWithinLimits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alg := rapid.SampledFrom([]spec.Algorithm{spec.TokenBucket, spec.FixedWindow, spec.SlidingWindow}).Draw(t, "alg")
		limit := func(name string, up int64) int64 {
			if up == 0 {
				up = 40
			}
			if rapid.Bool().Draw(t, name+"_set") {
				return rapid.Int64Range(1, up).Draw(t, name)
			}
			return 0
		}
		c := spec.Config{Name: "api", Algorithm: alg, RPM: limit("org_rpm", 0), TPM: 10 * limit("org_tpm", 0)}
		for i := range rapid.IntRange(0, 3).Draw(t, "projects") {
			c.Projects = append(c.Projects, spec.Project{Name: fmt.Sprintf("p%d", i), RPM: limit("p_rpm", c.RPM), TPM: limit("p_tpm", c.TPM)})
		}
		if len(c.Projects) == 0 {
			c.Projects = []spec.Project{{Name: "p0"}}
		}
		for i := range rapid.IntRange(1, 5).Draw(t, "keys") {
			k := spec.Key{Key: fmt.Sprintf("k%d", i)}
			up := spec.Project{RPM: c.RPM, TPM: c.TPM}
			if j := rapid.IntRange(-1, len(c.Projects)-1).Draw(t, "project"); j >= 0 {
				k.Project = c.Projects[j].Name
				up = c.Projects[j]
				if up.RPM == 0 {
					up.RPM = c.RPM
				}
				if up.TPM == 0 {
					up.TPM = c.TPM
				}
			}
			k.RPM, k.TPM = limit("k_rpm", up.RPM), limit("k_tpm", up.TPM)
			c.Keys = append(c.Keys, k)
		}
		m, err := NewModel(ServiceConfig{Config: c}, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatalf("config %+v: %v", c, err)
		}
		type adm struct {
			at     time.Duration
			tokens int64
		}
		byLevel := map[string][]adm{} // "key:k0", "project:p0", "organization"
		chain := func(k spec.Key) []string {
			ls := []string{"key:" + k.Key}
			if k.Project != "" {
				ls = append(ls, "project:"+k.Project)
			}
			return append(ls, "organization")
		}
		now := time.Duration(0)
		for range rapid.IntRange(1, 300).Draw(t, "arrivals") {
			now += time.Duration(rapid.Int64Range(0, int64(5*time.Second)).Draw(t, "gap"))
			k := c.Keys[rapid.IntRange(0, len(c.Keys)-1).Draw(t, "key")]
			in := rapid.Int64Range(0, 20).Draw(t, "tokens")
			d := m.Arrive(now, Request{Key: k.Key, Tokens: in})
			switch {
			case d.Admitted():
				m.Finish(now, d.ID, false)
				for _, l := range chain(k) {
					byLevel[l] = append(byLevel[l], adm{now, in})
				}
			case d.Kind == KindRateLimited:
				name := d.Level.String()
				if d.Level != LevelOrganization {
					name += ":" + d.Scope
				}
				if !strings.Contains(strings.Join(chain(k), " "), name) {
					t.Fatalf("%s's 429 names %s, not a level of %v", k.Key, name, chain(k))
				}
			}
		}
		bound := func(limit int64) int64 {
			if alg == spec.FixedWindow || alg == spec.TokenBucket {
				return 2 * limit // a window straddles two; capacity (one window's worth) + limit
			}
			return limit
		}
		limits := map[string][2]int64{"organization": {c.RPM, c.TPM}}
		for _, p := range c.Projects {
			limits["project:"+p.Name] = [2]int64{p.RPM, p.TPM}
		}
		for _, k := range c.Keys {
			limits["key:"+k.Key] = [2]int64{k.RPM, k.TPM}
		}
		for level, got := range byLevel {
			rpm, tpm := limits[level][0], limits[level][1]
			var reqs, toks int64
			lo := 0
			for _, a := range got {
				reqs, toks = reqs+1, toks+a.tokens
				for got[lo].at <= a.at-time.Minute {
					reqs, toks = reqs-1, toks-got[lo].tokens
					lo++
				}
				if rpm > 0 && reqs > bound(rpm) || tpm > 0 && toks > bound(tpm) {
					t.Fatalf("%s %s: %d requests, %d tokens in the minute ending %v; limits %d rpm, %d tpm", alg, level, reqs, toks, a.at, rpm, tpm)
				}
			}
		}
	})
}

// TestNestedAbsoluteEventSetsTheOrganisation: an event's absolute limits
// are the service's, so under nested limits they replace the
// organisation's and leave the project's: with the organisation raised
// from 10 to 1,000 requests/min, a project of 9 still admits its bucket's
// 9 at once and refuses the tenth, by the project; with the organisation
// lowered to 3 (another model), the third of the key's requests is the
// last admitted and the fourth is refused by the organisation.
func TestNestedAbsoluteEventSetsTheOrganisation(t *testing.T) {
	for _, tc := range []struct {
		rpm   int64
		admit int
		level Level
	}{{1000, 9, LevelProject}, {3, 3, LevelOrganization}} {
		c := spec.Config{Name: "api", RPM: 10, Projects: []spec.Project{{Name: "p", RPM: 9}}, Keys: []spec.Key{{Key: "k", Project: "p"}}}
		m := newTestModel(t, ServiceConfig{Config: c, Events: []spec.Event{{At: 0, For: time.Hour, Limits: &spec.EventLimits{RPM: tc.rpm}}}})
		for i := range tc.admit {
			if d := m.Arrive(0, Request{Key: "k"}); !d.Admitted() {
				t.Fatalf("organisation at %d: request %d refused: %+v", tc.rpm, i, d)
			}
		}
		if d := m.Arrive(0, Request{Key: "k"}); d.Kind != KindRateLimited || d.Level != tc.level {
			t.Fatalf("organisation at %d: request %d = %+v, want a 429 by the %v", tc.rpm, tc.admit, d, tc.level)
		}
	}
}

// TestNestedPerSecondMessage: a project's per-second limit that refuses
// is quoted with its own figures (2 a second, 0 left), though the project
// and the organisation also have per-minute limits.
func TestNestedPerSecondMessage(t *testing.T) {
	c := spec.Config{Name: "api", RPM: 600, Headers: spec.HeadersOpenAI, Projects: []spec.Project{{Name: "p", RPS: 2, RPM: 100}}, Keys: []spec.Key{{Key: "k", Project: "p"}}}
	m := newTestModel(t, ServiceConfig{Config: c})
	m.Arrive(0, Request{Key: "k"})
	m.Arrive(0, Request{Key: "k"})
	d := m.Arrive(0, Request{Key: "k"})
	want := "Rate limit reached for requests per second (RPS) in project p on service api: Limit 2, Remaining 0."
	if msg := string(d.RejectionBody(&m.cfg, 429)); d.Limit != LimitRPS || !strings.Contains(msg, want) {
		t.Fatalf("third request at 0: limit %v, body %s; want the message %q", d.Limit, msg, want)
	}
}
