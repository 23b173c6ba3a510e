package scenarios

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/scenarios/internal/suggest"
	"github.com/simbench/simbench/spec"
)

// decoder turns the generic TOML tree into a Scenario, collecting every
// problem instead of stopping at the first.
type decoder struct {
	file     string
	pos      *positions
	files    source // where empirical distribution files are read from; nil: nowhere
	problems []Problem
	// Names defined so far, for references: index in the Scenario's slice.
	services, tools, routes map[string]int
	strategies              map[string]string // name → key path of its first name key
	serviceNames, toolNames []string          // names in file order, cached
	suggest                 suggest.Suggester
	// accepts, when set, is told every key the decoder accepts: each
	// table's keys as the table finishes, whether the file sets them or not,
	// and each enum key with its allowed values. TestReference uses it to
	// check that docs/scenario-format.md documents the whole format.
	accepts func(key string, set bool, values []string)
}

// add records a problem at key's position.
func (d *decoder) add(key, format string, args ...any) {
	at := d.pos.lookup(key)
	d.problems = append(d.problems, Problem{
		File: d.file, Line: at.line, Col: at.col, Key: key,
		Message: fmt.Sprintf(format, args...),
	})
}

// table is one TOML table being decoded. Every key read through it is marked
// known; finish reports the rest as unknown.
type table struct {
	d     *decoder
	path  string
	m     map[string]any
	known []string // keys asked for, in the order the decoder asks
	// asked holds the keys of known once there are more than smallTable,
	// for tables keyed by names the file chooses (services, tools, mix),
	// which can have thousands.
	asked map[string]bool
}

func (d *decoder) table(path string, v any) *table {
	m, ok := v.(map[string]any)
	if !ok {
		d.add(path, "wants a table, got %s", describe(v))
		return nil
	}
	return &table{d: d, path: path, m: m}
}

func (t *table) key(k string) string { return joinKey(t.path, k) }

func (t *table) has(k string) bool {
	_, ok := t.m[k]
	return ok
}

// smallTable is how many known keys a table searches in order before it
// indexes them in a map.
const smallTable = 16

// isKnown says whether the decoder asked for k.
func (t *table) isKnown(k string) bool {
	if t.asked != nil {
		return t.asked[k]
	}
	return slices.Contains(t.known, k)
}

// get returns the raw value of k and marks k as a known key.
func (t *table) get(k string) (any, bool) {
	if !t.isKnown(k) {
		t.known = append(t.known, k)
		switch {
		case t.asked != nil:
			t.asked[k] = true
		case len(t.known) > smallTable:
			t.asked = make(map[string]bool, len(t.known))
			for _, k := range t.known {
				t.asked[k] = true
			}
		}
	}
	v, ok := t.m[k]
	return v, ok
}

func (t *table) add(k, format string, args ...any) { t.d.add(t.key(k), format, args...) }

// finish reports every key of the table that no decoder asked for.
func (t *table) finish() {
	if t.d.accepts != nil {
		for _, k := range t.known {
			t.d.accepts(t.key(k), t.has(k), nil)
		}
	}
	for _, k := range t.keys() {
		if t.isKnown(k) {
			continue
		}
		if near := t.d.suggest.Closest(k, t.known); near != "" {
			t.add(k, "unknown key; did you mean %s?", near)
		} else {
			t.add(k, "unknown key; the keys here are %s", strings.Join(t.known, ", "))
		}
	}
}

// keys returns the table's keys in file order.
func (t *table) keys() []string {
	type keyAt struct {
		k   string
		off int
	}
	keys := make([]keyAt, 0, len(t.m))
	for k := range t.m {
		keys = append(keys, keyAt{k, t.d.pos.offset(t.key(k))})
	}
	slices.SortFunc(keys, func(a, b keyAt) int { return cmp.Or(cmp.Compare(a.off, b.off), cmp.Compare(a.k, b.k)) })
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.k
	}
	return out
}

// sub returns the table under k, or nil when k is absent or not a table.
func (t *table) sub(k string) *table {
	v, ok := t.get(k)
	if !ok {
		return nil
	}
	return t.d.table(t.key(k), v)
}

// tables returns the entries of an array of tables under k.
func (t *table) tables(k string) []*table {
	v, ok := t.get(k)
	if !ok {
		return nil
	}
	var out []*table
	switch v := v.(type) {
	case []map[string]any:
		for i, m := range v {
			out = append(out, t.d.table(fmt.Sprintf("%s[%d]", t.key(k), i), m))
		}
	case []any:
		for i, e := range v {
			if st := t.d.table(fmt.Sprintf("%s[%d]", t.key(k), i), e); st != nil {
				out = append(out, st)
			}
		}
	default:
		t.add(k, "wants an array of tables, like %s = [ { … }, { … } ], got %s", k, describe(v))
	}
	return out
}

func (t *table) str(k string) (string, bool) {
	v, ok := t.get(k)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		t.add(k, "wants a string, got %s", describe(v))
	}
	return s, ok
}

func (t *table) boolean(k string) (bool, bool) {
	v, ok := t.get(k)
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		t.add(k, "wants true or false, got %s", describe(v))
	}
	return b, ok
}

// integer returns a whole number from lo to hi; why says where hi comes
// from, for the problem when it is exceeded.
func (t *table) integer(k string, lo, hi int64, why string) (int64, bool) {
	v, ok := t.get(k)
	if !ok {
		return 0, false
	}
	n, ok := v.(int64)
	if f, isFloat := v.(float64); isFloat && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		n, ok = int64(f), true
	}
	if !ok {
		t.add(k, "wants a whole number, got %s", describe(v))
		return 0, false
	}
	if n < lo {
		t.add(k, "is %d; it must be at least %d", n, lo)
		return 0, false
	}
	if n > hi {
		t.add(k, "is %d; it must be at most %d (%s)", n, hi, why)
		return 0, false
	}
	return n, true
}

// number returns an integer or float value.
func (d *decoder) number(key string, v any) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			d.add(key, "is %v; use a finite number", v)
			return 0, false
		}
		return v, true
	}
	d.add(key, "wants a number, got %s", describe(v))
	return 0, false
}

// fraction returns a number in [0, 1].
func (t *table) fraction(k string) (float64, bool) {
	v, ok := t.get(k)
	if !ok {
		return 0, false
	}
	f, ok := t.d.number(t.key(k), v)
	if ok && (f < 0 || f > 1) {
		t.add(k, "is %s; it is a fraction and must be between 0 and 1", spec.ShowAmount(f))
		return 0, false
	}
	return f, ok
}

// positive returns a number greater than 0 and at most hi; why says where
// hi comes from.
func (t *table) positive(k string, hi float64, why string) (float64, bool) {
	v, ok := t.get(k)
	if !ok {
		return 0, false
	}
	f, ok := t.d.number(t.key(k), v)
	switch {
	case ok && f <= 0:
		t.add(k, "is %s; it must be greater than 0", spec.ShowAmount(f))
		return 0, false
	case ok && f > hi:
		t.add(k, "is %s; it must be at most %s (%s)", spec.ShowAmount(f), spec.ShowAmount(hi), why)
		return 0, false
	}
	return f, ok
}

func (d *decoder) duration(key string, v any) (time.Duration, bool) {
	s, ok := v.(string)
	if !ok {
		d.add(key, "wants a duration string with a unit, like \"400ms\", got %s", describe(v))
		return 0, false
	}
	dur, err := parseDuration(s)
	if err != nil {
		d.add(key, "%v", err)
		return 0, false
	}
	if dur > MaxDuration {
		d.add(key, "is %v; a duration may be at most %v (a year), so that sums of a run's times cannot overflow", dur, MaxDuration)
		return 0, false
	}
	return dur, true
}

func (t *table) duration(k string) (time.Duration, bool) {
	v, ok := t.get(k)
	if !ok {
		return 0, false
	}
	return t.d.duration(t.key(k), v)
}

// rate returns a rate in events per `per`: a plain number is already in
// that unit, a string such as "10/s" is converted. It must be at least
// MinRatePerHour and at most hi (per `per`); why says where hi comes from.
func (t *table) rate(k string, per time.Duration, hi float64, why string) (float64, bool) {
	v, ok := t.get(k)
	if !ok {
		return 0, false
	}
	unit := map[time.Duration]string{time.Second: "/s", time.Minute: "/m"}[per]
	example := map[time.Duration]string{time.Second: `10 or "10/s"`, time.Minute: `600 or "600/m"`}[per]
	var r float64
	switch v := v.(type) {
	case string:
		perSecond, err := ParseRate(v)
		if err != nil {
			t.add(k, "%v", err)
			return 0, false
		}
		r = perSecond * per.Seconds()
	case int64, float64:
		r, ok = t.d.number(t.key(k), v)
		if !ok {
			return 0, false
		}
	default:
		t.add(k, "wants a rate, like %s, got %s", example, describe(v))
		return 0, false
	}
	lo := MinRatePerHour * per.Hours()
	switch {
	case r <= 0:
		t.add(k, "is %s%s; a rate must be greater than 0 (leave the key out for no limit)", spec.ShowAmount(r), unit)
		return 0, false
	case r < lo:
		t.add(k, "is %s%s; a rate must be at least %d an hour (%s%s): slower is no limit over a run, and the wait for the next request would overflow", spec.ShowAmount(r), unit, MinRatePerHour, strconv.FormatFloat(lo, 'g', 3, 64), unit)
		return 0, false
	case r > hi:
		t.add(k, "is %s%s; it must be at most %s%s (%s)", spec.ShowAmount(r), unit, spec.ShowAmount(hi), unit, why)
		return 0, false
	}
	return r, true
}

// enum returns the value of k, which must be one of allowed, or def when k
// is absent or wrong.
func enum[E ~string](t *table, k string, def E, allowed ...E) E {
	return pick(t, k, def, allowed, func(e E) string { return string(e) })
}

// named is enum for a type that names its values itself, as sched's
// strategy enumerations do: allowed are its choices (sched.Backoffs, …),
// spelled as String prints them, so the file format keeps no list of
// its own.
func named[E interface {
	comparable
	fmt.Stringer
}](t *table, k string, def E, allowed []E) E {
	return pick(t, k, def, allowed, E.String)
}

// pick returns the value of k whose name is one of allowed's, or def when
// k is absent or names none of them.
func pick[E comparable](t *table, k string, def E, allowed []E, name func(E) string) E {
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = name(a)
	}
	if t.d.accepts != nil {
		t.d.accepts(t.key(k), t.has(k), names)
	}
	s, ok := t.str(k)
	if !ok {
		return def
	}
	if i := slices.Index(names, s); i >= 0 {
		return allowed[i]
	}
	if near := t.d.suggest.Closest(s, names); near != "" {
		t.add(k, "unknown value %q; did you mean %s? (one of %s)", s, near, quoteList(names))
	} else {
		t.add(k, "unknown value %q; use one of %s", s, quoteList(names))
	}
	return def
}

// strings returns an array of non-empty strings.
func (t *table) strings(k string) ([]string, bool) {
	v, ok := t.get(k)
	if !ok {
		return nil, false
	}
	arr, ok := v.([]any)
	if !ok {
		t.add(k, "wants an array of strings, like %s = [\"a\", \"b\"], got %s", k, describe(v))
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		key := t.key(k) + "[" + strconv.Itoa(i) + "]"
		s, isStr := e.(string)
		switch {
		case !isStr:
			t.d.add(key, "wants a string, got %s", describe(e))
			ok = false
		case s == "":
			t.d.add(key, "is empty; give a name")
			ok = false
		default:
			out = append(out, s)
		}
	}
	return out, ok
}
