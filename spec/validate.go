package spec

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Problem is one thing wrong with a configuration: the key it concerns,
// spelled as a scenario file spells it below the service's table (such as
// "latency.p95", "faults.error_rate" or "keys[2]"; "" for the service
// itself), and what is wrong.
type Problem struct {
	// Key is the key concerned, as the scenario file spells it below the
	// service's table ("": the service itself); Msg says what is wrong.
	Key string
	Msg string
}

// String formats the problem as KEY: MESSAGE.
func (p Problem) String() string {
	if p.Key == "" {
		return p.Msg
	}
	return p.Key + ": " + p.Msg
}

// problems collects Problems under a key prefix.
type problems struct {
	prefix string
	list   []Problem
}

func (ps *problems) add(key, format string, args ...any) {
	ps.list = append(ps.list, Problem{Key: joinKey(ps.prefix, key), Msg: fmt.Sprintf(format, args...)})
}

// under adds sub's problems with their keys below key.
func (ps *problems) under(key string, sub []Problem) {
	for _, p := range sub {
		ps.list = append(ps.list, Problem{Key: joinKey(joinKey(ps.prefix, key), p.Key), Msg: p.Msg})
	}
}

func joinKey(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	case strings.HasPrefix(b, "["):
		return a + b
	}
	return a + "." + b
}

// Validate reports every problem with the configuration at once, each as
// `service "NAME": KEY: MESSAGE`, joined with errors.Join; nil means
// Problems found none.
func (c Config) Validate() error {
	ps := c.Problems()
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = fmt.Errorf("service %q: %s", c.Name, p)
	}
	return errors.Join(errs...)
}

// Problems returns every problem with the configuration, in the order of
// Config's fields; none means fakeapi's model and server accept it. It
// reads no files: an empirical distribution must have its Samples loaded.
func (c Config) Problems() []Problem {
	ps := &problems{}
	if msg := nameProblem(c.Name); msg != "" {
		ps.add("", "%s", msg)
	}
	c.limitProblems(ps)
	if c.MaxConcurrent < 0 {
		ps.add("max_concurrent", "is %d; it must not be negative", c.MaxConcurrent)
	}
	if c.ConcurrencyRetryAfter < 0 {
		ps.add("concurrency_retry_after", "is %v; it must not be negative", c.ConcurrencyRetryAfter)
	}
	ps.under("latency", c.Latency.Problems())
	if l := c.Load; l.Knee < 0 || !(l.Factor >= 0) {
		ps.add("load", "knee (%d) and factor (%v) must not be negative", l.Knee, l.Factor)
	}
	ps.under("faults", c.Faults.Problems())
	c.headerProblems(ps)
	if c.MaxBodyBytes < 0 || c.OutputTokens < 0 {
		ps.add("", "max_body_bytes (%d) and output_tokens (%d) must not be negative", c.MaxBodyBytes, c.OutputTokens)
	}
	c.projectProblems(ps)
	c.keyProblems(ps)
	if b := c.Background; !(b.Rate >= 0 && b.Rate <= MaxBackgroundRate) {
		ps.add("background.rate", "is %v; it must be in [0, %d] requests per second", b.Rate, MaxBackgroundRate)
	}
	if b := c.Background; b.Tokens < 0 {
		ps.add("background.tokens", "is %d; it must not be negative", b.Tokens)
	}
	if b := c.Background; b.Burst < 0 || b.Burst > MaxBackgroundBurst {
		ps.add("background.burst", "is %d; it must be in [0, %d]", b.Burst, MaxBackgroundBurst)
	}
	ps.under("", c.Generation.Problems())
	c.Daily.problems(ps)
	return ps.list
}

// nameProblem says what is wrong with a service name, or "": it must not
// be empty, and it must be usable as a URL path segment, since a served
// service answers below /NAME/ (no /, ?, #, %, space or control character),
// and must not be _simbench, the server's own prefix.
func nameProblem(name string) string {
	switch {
	case name == "":
		return "the service has no name"
	case strings.ContainsFunc(name, func(r rune) bool { return strings.ContainsRune("/?#% ", r) || unicode.IsControl(r) }):
		return fmt.Sprintf("the name %q must be usable as a URL path segment: no /, ?, #, %%, space or control character", name)
	case name == "_simbench":
		return "the name _simbench is the server's own; choose another"
	}
	return ""
}

// limitProblems checks the rate limits and bursts.
func (c Config) limitProblems(ps *problems) {
	for _, l := range []struct {
		key string
		v   int64
		win time.Duration
	}{{"rps", c.RPS, time.Second}, {"rpm", c.RPM, time.Minute}, {"tpm", c.TPM, time.Minute},
		{"input_tpm", c.InputTPM, time.Minute}, {"output_tpm", c.OutputTPM, time.Minute},
		{"burst", c.Burst, time.Minute}, {"token_burst", c.TokenBurst, time.Minute}} {
		if l.v < 0 {
			ps.add(l.key, "is %d; it must not be negative", l.v)
		} else if hi := limitBound(l.win); l.v > hi {
			ps.add(l.key, "is %d, too large: it must be at most %d, the most the service counts over %v", l.v, hi, l.win)
		}
	}
	switch c.Algorithm {
	case "", TokenBucket, FixedWindow, SlidingWindow:
	default:
		ps.add("limiter", "unknown value %q; use one of %s", c.Algorithm, quote(Algorithms))
	}
	if c.Burst > 0 {
		if c.Algorithm != "" && c.Algorithm != TokenBucket {
			ps.add("burst", "only applies to limiter = %q; remove it or change the limiter", TokenBucket)
		}
		if c.RPS == 0 && c.RPM == 0 {
			ps.add("burst", "sizes the request bucket, but there is no rps or rpm limit; add one or remove burst")
		}
	}
}

// headerProblems checks the header style, API style and lying.
func (c Config) headerProblems(ps *problems) {
	switch c.Headers {
	case "", HeadersOpenAI, HeadersAnthropic, HeadersStandard, HeadersNone:
	default:
		ps.add("headers", "unknown value %q; use one of %s", c.Headers, quote(HeaderStyles))
	}
	if c.API != "" && !slices.Contains(APIStyles, c.API) {
		ps.add("api", "unknown value %q; use one of %s", c.API, quote(APIStyles))
	}
	switch c.Lie {
	case LieNone, LieShort, LieMissing:
	default:
		ps.add("lying", "unknown value %q; use one of %s", c.Lie, quote(LieModes))
	}
	if !(c.LieFactor >= 0 && c.LieFactor <= 1) {
		ps.add("lie_factor", "is %v; it must be in [0, 1]", c.LieFactor)
	}
}

// keyProblems checks the API keys and their limits.
func (c Config) keyProblems(ps *problems) {
	seen := make(map[string]bool, len(c.Keys))
	for i, k := range c.Keys {
		key := fmt.Sprintf("keys[%d]", i)
		switch {
		case k.Key == "":
			ps.add(key, "is empty; an API key needs at least one character")
		case seen[k.Key]:
			ps.add(key, "repeats key %q; each API key is one tenant", k.Key)
		}
		seen[k.Key] = true
		nestedLimits(k.RPS, k.RPM, k.TPM, k.MaxConcurrent).bounds(ps, key)
		if len(c.Projects) == 0 {
			if k.Project != "" {
				ps.add(key+".project", "names project %q, but the service has no projects; add it to projects or remove project", k.Project)
			}
			continue
		}
		above := c.organisation()
		what := "the organisation's"
		if k.Project != "" {
			i := slices.IndexFunc(c.Projects, func(p Project) bool { return p.Name == k.Project })
			if i < 0 {
				ps.add(key+".project", "names project %q, which is not one of the service's projects (%s)", k.Project, quote(c.projectNames()))
				continue
			}
			above = nestedLimits(c.Projects[i].RPS, c.Projects[i].RPM, c.Projects[i].TPM, c.Projects[i].MaxConcurrent).under(above)
			what = fmt.Sprintf("project %q's", k.Project)
		}
		nestedLimits(k.RPS, k.RPM, k.TPM, k.MaxConcurrent).above(ps, key, above, what)
	}
}

// projectProblems checks the projects of nested limits: names, limits, and
// that no project sets a limit above its organisation's (the service's),
// which a provider would cap anyway.
func (c Config) projectProblems(ps *problems) {
	if len(c.Projects) > 0 && len(c.Keys) == 0 {
		ps.add("projects", "group API keys, but the service has no keys; add keys that name the projects, or remove projects")
	}
	seen := make(map[string]bool, len(c.Projects))
	for i, p := range c.Projects {
		key := fmt.Sprintf("projects[%d]", i)
		switch {
		case p.Name == "":
			ps.add(key, "has no name; a key names its project in project")
		case seen[p.Name]:
			ps.add(key, "repeats project %q; each project is one set of limits", p.Name)
		}
		seen[p.Name] = true
		nestedLimits(p.RPS, p.RPM, p.TPM, p.MaxConcurrent).bounds(ps, key)
		nestedLimits(p.RPS, p.RPM, p.TPM, p.MaxConcurrent).above(ps, key, c.organisation(), "the organisation's")
	}
}

// nested is the limits one level of nested limits sets (0: none): a key's,
// a project's or the organisation's.
type nested struct {
	rps, rpm, tpm int64
	conc          int
}

func nestedLimits(rps, rpm, tpm int64, conc int) nested { return nested{rps, rpm, tpm, conc} }

// organisation is the organisation's limits: the service's own.
func (c Config) organisation() nested {
	return nested{c.RPS, c.RPM, c.TPM, c.MaxConcurrent}
}

// under is n's limits, with those it leaves at 0 taken from the level
// above: what binds a level below n.
func (n nested) under(up nested) nested {
	or := func(a, b int64) int64 {
		if a != 0 {
			return a
		}
		return b
	}
	return nested{or(n.rps, up.rps), or(n.rpm, up.rpm), or(n.tpm, up.tpm), int(or(int64(n.conc), int64(up.conc)))}
}

// bounds adds a problem at key when a limit of n is negative or too large
// (rps above MaxRPS, rpm or tpm above MaxLimit).
func (n nested) bounds(ps *problems, key string) {
	if n.rps < 0 || n.rpm < 0 || n.tpm < 0 || n.conc < 0 {
		ps.add(key, "limits must not be negative")
	}
	if n.rps > MaxRPS || n.rpm > MaxLimit || n.tpm > MaxLimit {
		ps.add(key, "a limit is too large (rps at most %d, rpm and tpm at most %d)", int64(MaxRPS), int64(MaxLimit))
	}
}

// above adds a problem at key for each limit of n above the same limit of
// up (what, such as "the organisation's"): a provider caps a level by the
// one it belongs to, so such a limit could never be reached.
func (n nested) above(ps *problems, key string, up nested, what string) {
	for _, l := range []struct {
		name   string
		v, top int64
	}{{"rps", n.rps, up.rps}, {"rpm", n.rpm, up.rpm}, {"tpm", n.tpm, up.tpm}, {"max_concurrent", int64(n.conc), int64(up.conc)}} {
		if l.top > 0 && l.v > l.top {
			ps.add(joinKey(key, l.name), "is %d, above %s %d; a provider caps a level by the one it belongs to, so lower it to at most %d or remove it", l.v, what, l.top, l.top)
		}
	}
}

// projectNames lists the projects' names.
func (c Config) projectNames() []string {
	names := make([]string, len(c.Projects))
	for i, p := range c.Projects {
		names[i] = p.Name
	}
	return names
}

// Problems returns the problems of the injected faults, with keys below
// faults.
func (f Faults) Problems() []Problem {
	ps := &problems{}
	for _, r := range []struct {
		key string
		v   float64
	}{{"error_rate", f.ErrorRate}, {"hang_rate", f.HangRate}, {"reset_rate", f.ResetRate},
		{"slow_first_byte.rate", f.SlowFirstByte.Rate}, {"overload.rate", f.Overload.Rate},
		{"conflict", f.Conflict}} {
		if !(r.v >= 0 && r.v <= 1) {
			ps.add(r.key, "is %v; it must be a fraction in [0, 1]", r.v)
		}
	}
	if sum := f.ErrorRate + f.HangRate + f.ResetRate; sum > 1 {
		ps.add("", "error_rate + hang_rate + reset_rate is %s; they are fractions of all requests, so keep the sum at most 1", ShowAmount(sum))
	}
	if f.ErrorStatus != 0 && (f.ErrorStatus < 500 || f.ErrorStatus > 599) {
		ps.add("error_status", "is %d; it must be a 5xx status", f.ErrorStatus)
	}
	if f.SlowFirstByte.Delay < 0 {
		ps.add("slow_first_byte.delay", "is %v; it must not be negative", f.SlowFirstByte.Delay)
	}
	if f.Credit < 0 || f.Credit > MaxLimit {
		ps.add("credit", "is %d; set the tokens the account may spend, from 0 (unlimited) to %d", f.Credit, int64(MaxLimit))
	}
	if f.ContextWindow < 0 || f.ContextWindow > MaxLimit {
		ps.add("context_window", "is %d; set the model's context in tokens, from 0 (unlimited) to %d", f.ContextWindow, int64(MaxLimit))
	}
	if f.RetryDelayBody != "" && !slices.Contains(RetryDelayBodies, f.RetryDelayBody) {
		ps.add("retry_delay_body", "unknown value %q; use one of %s", f.RetryDelayBody, quote(RetryDelayBodies))
	}
	o := f.Overload
	switch {
	case o.Every < 0 || o.Length < 0:
		ps.add("overload", "every (%v) and length (%v) must not be negative", o.Every, o.Length)
	case o.Every > 0 && o.Length == 0:
		ps.add("overload.length", "is 0; set how long an episode lasts, like length = \"20s\"")
	}
	return ps.list
}

// Problems returns the problems of the generation pace, with keys ttft and
// tokens_per_s.
func (g Generation) Problems() []Problem {
	ps := &problems{}
	if g.TTFT.IsSet() {
		ps.under("ttft", g.TTFT.Problems())
	}
	if r := g.TokensPerSecond; r.IsSet() {
		for _, v := range append([]float64{r.Value, r.Min, r.Max, r.Mean, r.Stddev, r.P50, r.P95}, r.Samples...) {
			if !(math.Abs(v) <= MaxTokensPerSecond) {
				ps.add("tokens_per_s", "holds %v; its values must be at most %g tokens per second", v, float64(MaxTokensPerSecond))
				return ps.list
			}
		}
		ps.under("tokens_per_s", r.Problems())
	}
	return ps.list
}

// Problems returns the parameters of d that are negative or contradict
// each other, with keys naming the parameter ("p95", "max"; "" for d
// itself). The zero Dist has none. It does not bound the largest draw
// (see Upper): each use of a distribution has its own bound.
func (d Dist[T]) Problems() []Problem {
	ps := &problems{}
	for _, p := range []struct {
		key string
		v   T
	}{{"value", d.Value}, {"min", d.Min}, {"max", d.Max}, {"mean", d.Mean}, {"stddev", d.Stddev}, {"p50", d.P50}, {"p95", d.P95}} {
		if p.v < 0 {
			ps.add(p.key, "is %s; it must be 0 or more", Show(p.v))
		}
	}
	if len(ps.list) > 0 {
		return ps.list
	}
	// A cap (optional max) must not be below the distribution's typical value.
	capBelow := func(key string, v T) {
		if d.Max > 0 && d.Max < v {
			ps.add("max", "max (%s) is below %s (%s); a cap must be above the typical value", Show(d.Max), key, Show(v))
		}
	}
	switch d.Kind {
	case "", DistConstant:
	case DistUniform:
		if d.Max < d.Min {
			ps.add("max", "max (%s) is below min (%s); swap them", Show(d.Max), Show(d.Min))
		}
	case DistNormal:
		capBelow("mean", d.Mean)
	case DistLognormal:
		switch {
		case d.P50 <= 0:
			ps.add("p50", "is 0; a lognormal needs p50 greater than 0")
		case d.P95 < d.P50:
			ps.add("p95", "p95 (%s) is below p50 (%s); p95 must be above p50", Show(d.P95), Show(d.P50))
		case d.P95 == d.P50:
			ps.add("p95", "p95 (%s) equals p50; a lognormal needs p95 above p50 (for a fixed value, use a constant)", Show(d.P95))
		default:
			capBelow("p50", d.P50)
		}
	case DistExponential:
		if d.Mean <= 0 {
			ps.add("mean", "is 0; an exponential needs mean greater than 0")
		} else {
			capBelow("mean", d.Mean)
		}
	case DistPareto:
		switch {
		case d.Min <= 0:
			ps.add("min", "is 0; a Pareto needs its scale min greater than 0")
		case !(d.Alpha > 0):
			ps.add("alpha", "is %v; a Pareto needs alpha greater than 0", d.Alpha)
		default:
			capBelow("min", d.Min)
		}
	case DistEmpirical:
		if len(d.Samples) == 0 {
			ps.add("file", "no values are loaded; an empirical distribution draws from the values of its file (a scenario's loader and fakeapi's LoadFiles read them into Samples)")
		}
		for i, s := range d.Samples {
			if s < 0 {
				ps.add("file", "value %d is %s; values must be 0 or more", i+1, Show(s))
				break
			}
		}
	default:
		ps.add("dist", "unknown value %q; use one of %s", d.Kind, quote(DistKinds))
	}
	return ps.list
}

// quote renders names as "a", "b", "c" for messages.
func quote[E ~string](names []E) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", string(n))
	}
	return strings.Join(q, ", ")
}

// limitBound is the largest limit over window a key may set: MaxRPS a
// second, MaxLimit over a minute.
func limitBound(window time.Duration) int64 {
	if window < time.Minute {
		return MaxRPS
	}
	return MaxLimit
}
