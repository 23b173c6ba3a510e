package scenarios

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"path"
	"strings"
	"time"

	"github.com/simbench/simbench/spec"
)

// unit says how the values of one kind of distribution are written.
type unit[T time.Duration | float64] struct {
	value func(d *decoder, key string, v any) (T, bool) // a TOML value (≥ 0)
	show  func(T) string
	// showUpper prints a bound or a Dist.Upper, which may not fit a T.
	showUpper func(float64) string
}

// A bound is the largest value a key's distribution may draw, and why.
type bound struct {
	hi  float64
	why string
}

// The bounds of the distribution keys.
var (
	durationBound = bound{float64(MaxDuration), "a year, so that sums of a run's times cannot overflow"}
	countBound    = bound{MaxCallsPerTurn, "the most calls one turn can make"}
	subagentBound = bound{MaxSubagents, "the most subagents one turn can start"}
	tokenBound    = bound{MaxTokensPerCall, "the most tokens one call can take, so that a turn's token sums cannot overflow"}
	// tokensPerSecondBound bounds tokens_per_s.
	tokensPerSecondBound = bound{MaxTokensPerSecond, "a million output tokens a second, far past any model"}
)

var durations = unit[time.Duration]{
	value: (*decoder).duration,
	show:  time.Duration.String,
	showUpper: func(f float64) string {
		if f >= math.MaxInt64 {
			return "more than 292 years"
		}
		return time.Duration(f).String()
	},
}

var amounts = unit[float64]{
	value: func(d *decoder, key string, v any) (float64, bool) {
		f, ok := d.number(key, v)
		if ok && f < 0 {
			d.add(key, "is %s; it must be 0 or more", spec.ShowAmount(f))
			return 0, false
		}
		return f, ok
	},
	show:      spec.ShowAmount,
	showUpper: spec.ShowAmount,
}

// distParams lists each family's parameters: required ones first, then
// optional ones after a "|".
var distParams = map[spec.DistKind][]string{
	spec.DistConstant:    {"value"},
	spec.DistUniform:     {"min", "max"},
	spec.DistNormal:      {"mean", "stddev", "|", "max"},
	spec.DistLognormal:   {"p50", "p95", "|", "max"},
	spec.DistExponential: {"mean", "|", "max"},
	spec.DistPareto:      {"min", "alpha", "|", "max"},
	spec.DistEmpirical:   {"file"},
}

var allDistParams = []string{"value", "min", "max", "mean", "stddev", "p50", "p95", "alpha", "file"}

// dist decodes the distribution under k: a plain value (a constant) or a
// table { dist = "…", parameters… }, whose draws must stay within b. ok is
// false when k is absent or wrong.
func dist[T time.Duration | float64](t *table, k string, u unit[T], b bound) (spec.Dist[T], bool) {
	v, present := t.get(k)
	if !present {
		return spec.Dist[T]{}, false
	}
	key := t.key(k)
	if _, isTable := v.(map[string]any); !isTable {
		x, ok := u.value(t.d, key, v)
		if ok && float64(x) > b.hi {
			t.add(k, "is %s; it must be at most %s (%s)", u.show(x), u.showUpper(b.hi), b.why)
			return spec.Dist[T]{}, false
		}
		return spec.Constant(x), ok
	}
	st := t.d.table(key, v)
	defer st.finish()
	kind := enum(st, "dist", "", spec.DistKinds...)
	if !st.has("dist") {
		st.d.add(key, "missing dist; set dist = one of %s", quoteList(kindNames()))
	}
	if kind == "" {
		for _, p := range allDistParams {
			st.get(p) // don't also call the parameters unknown
		}
		return spec.Dist[T]{}, false
	}
	want := distParams[kind]
	required := want
	if i := indexOf(want, "|"); i >= 0 {
		required, want = want[:i], append(want[:i:i], want[i+1:]...)
	}
	ok := true
	for _, p := range allDistParams {
		if st.has(p) && indexOf(want, p) < 0 {
			st.get(p)
			st.add(p, "does not apply to dist = %q; it takes %s", kind, strings.Join(want, ", "))
			ok = false
		}
	}
	for _, p := range required {
		if !st.has(p) {
			st.d.add(key, "dist = %q needs %s; add %s = …", kind, p, p)
			ok = false
		}
	}
	out := spec.Dist[T]{Kind: kind}
	param := func(p string, dst *T) {
		if raw, present := st.get(p); present && indexOf(want, p) >= 0 {
			x, good := u.value(st.d, st.key(p), raw)
			*dst, ok = x, ok && good
		}
	}
	param("value", &out.Value)
	param("min", &out.Min)
	param("max", &out.Max)
	param("mean", &out.Mean)
	param("stddev", &out.Stddev)
	param("p50", &out.P50)
	param("p95", &out.P95)
	if indexOf(want, "alpha") >= 0 {
		if a, present := st.positive("alpha", math.MaxFloat64, ""); present {
			out.Alpha = a
		} else if st.has("alpha") {
			ok = false
		}
	}
	if indexOf(want, "file") >= 0 {
		if f, present := st.str("file"); present {
			out.File = f
			out.Samples, ok = empirical(st, f, u)
		}
	}
	if !ok || !checkDist(st, out) {
		return out, false
	}
	return out, checkUpper(st, out, u, b)
}

// checkUpper reports a distribution that can draw more than b allows,
// blaming the parameter that sets its largest draw.
func checkUpper[T time.Duration | float64](st *table, d spec.Dist[T], u unit[T], b bound) bool {
	up := d.Upper()
	if up <= b.hi {
		return true
	}
	limit := u.showUpper(b.hi)
	switch {
	case d.Kind == spec.DistConstant:
		st.add("value", "is %s; it must be at most %s (%s)", u.show(d.Value), limit, b.why)
	case d.Kind == spec.DistEmpirical:
		st.add("file", "%q holds %s; its values must be at most %s (%s)", d.File, u.showUpper(up), limit, b.why)
	case d.Kind == spec.DistUniform || st.has("max") && float64(d.Max) == up:
		st.add("max", "is %s; it must be at most %s (%s)", u.show(d.Max), limit, b.why)
	default:
		draws := "can draw " + u.showUpper(up) + " once in 10^12 draws"
		if math.IsInf(up, 1) {
			draws = "draws without bound"
		}
		st.d.add(st.path, "%s; it must stay at most %s (%s): set max = %s or less, or narrow the distribution",
			draws, limit, b.why, u.showUpper(b.hi))
	}
	return false
}

// checkDist reports the parameters that contradict each other, as the one
// validator of distributions (spec.Dist.Problems) finds them.
func checkDist[T spec.Unit](st *table, d spec.Dist[T]) bool {
	problems := d.Problems()
	for _, p := range problems {
		st.d.add(keyBelow(st.path, p.Key), "%s", p.Msg)
	}
	return len(problems) == 0
}

// empirical reads an empirical distribution's file, in the format
// spec.ReadSamples reads; its problems name the file and the line.
func empirical[T time.Duration | float64](st *table, file string, u unit[T]) ([]T, bool) {
	key := st.key("file")
	if st.d.files == nil {
		st.d.add(key, "cannot read %q: this scenario was not loaded from a directory", file)
		return nil, false
	}
	if !fs.ValidPath(path.Clean(file)) {
		st.d.add(key, "cannot read %q: give a path relative to the scenario file's directory, without a leading / or ..", file)
		return nil, false
	}
	data, err := st.d.files.read(path.Clean(file))
	var notRegular notRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		st.d.add(key, "cannot read %q: no such file (paths are relative to the scenario file)", file)
		return nil, false
	case errors.As(err, &notRegular):
		st.d.add(key, "cannot read %q: it is %v; point file at a text file of values, one per line", file, err)
		return nil, false
	case err != nil:
		st.d.add(key, "cannot read %q: %v", file, err)
		return nil, false
	}
	out, err := spec.ReadSamples[T](bytes.NewReader(data))
	var bad *spec.LineError
	switch {
	case errors.As(err, &bad):
		st.d.add(key, "%s:%d: %v; put one value per line", file, bad.Line, bad.Err)
		return nil, false
	case err != nil:
		st.d.add(key, "%q %v", file, err)
		return nil, false
	}
	return out, true
}

func kindNames() []string {
	names := make([]string, len(spec.DistKinds))
	for i, k := range spec.DistKinds {
		names[i] = string(k)
	}
	return names
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
