package calibrate

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/simbench/simbench/internal/atomicfile"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
)

// Errors WriteScenario wraps, for callers that choose an exit code.
var (
	// ErrTooLarge: the traces hold more than a scenario file can (too
	// many services or tools); invalid input.
	ErrTooLarge = errors.New("the scenario is too large")
	// ErrBug: the scenario calibrate made is not one it meant to make,
	// or does not load. Every value is checked before it is written, so
	// this is a bug in calibrate.
	ErrBug = errors.New("a bug in calibrate")
)

// File is a file the scenario refers to, written beside it: an empirical
// distribution.
type File struct {
	Name string // relative to the scenario's directory
	Data []byte // the file's contents, one value a line
}

// Scenario renders the result as a scenario file called name, with a
// comment on every figure saying where it came from and how well it fits,
// and the empirical files it refers to. It does not validate; WriteScenario
// does.
func (r *Result) Scenario(name string) (toml []byte, files []File) {
	w := &tomlWriter{name: name}
	w.head(r)
	w.workload(r)
	for i := range r.Services {
		w.service(&r.Services[i], r.Duration)
	}
	w.tools(r)
	w.strategies(r)
	return w.buf.Bytes(), w.files
}

// WriteScenario writes the scenario to path and its empirical files beside
// it, after checking it: it must hold the tables meant and no others
// (checkKeys), fit in a scenario file, and load (scenarios.Parse). The
// scenario's name is path's base name without ".toml", made safe
// (atomicfile.SafeName). It returns the paths written. Each file is
// written atomically (a temporary file renamed into place).
func (r *Result) WriteScenario(path string) ([]string, error) {
	name := atomicfile.SafeName(strings.TrimSuffix(filepath.Base(path), ".toml"))
	data, files := r.Scenario(name)
	if len(data) > scenarios.MaxFileBytes {
		return nil, fmt.Errorf("calibrate: %w: it would take %d KiB, more than the %d KiB a scenario file may hold; calibrate fewer services and tools at a time", ErrTooLarge, len(data)>>10, scenarios.MaxFileBytes>>10)
	}
	if err := checkKeys(data, r); err != nil {
		return nil, fmt.Errorf("calibrate: %w: the scenario to write is not the one meant: %w", ErrBug, err)
	}
	dir := filepath.Dir(path)
	var written []string
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		if err := writeAtomic(p, f.Data); err != nil {
			return written, err
		}
		written = append(written, p)
	}
	if _, err := scenarios.Parse(path, data); err != nil {
		return written, fmt.Errorf("calibrate: %w: the scenario written does not load: %w", ErrBug, err)
	}
	if err := writeAtomic(path, data); err != nil {
		return written, err
	}
	return append(written, path), nil
}

func writeAtomic(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	return nil
}

type tomlWriter struct {
	name  string
	buf   bytes.Buffer
	files []File
}

// p writes a formatted piece of the scenario. Every string argument is
// cleaned of control characters first (see clean): keys and values come
// encoded already (quote, tomlKey), and text from a trace in a comment
// cannot break out of it.
func (w *tomlWriter) p(format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = clean(s)
		}
	}
	fmt.Fprintf(&w.buf, format, args...)
}

func (w *tomlWriter) head(r *Result) {
	w.p("# %s: calibrated by simbench calibrate from %s attempts in %d trace(s):\n", w.name, count(r.Records), len(r.Sources))
	for _, s := range r.Sources {
		w.p("#   %s (%s, %s attempts", s.Path, s.Format, count(s.Records))
		if s.Skipped > 0 {
			w.p(", %s other spans skipped", count(s.Skipped))
		}
		w.p(")\n")
	}
	w.p("# covering %s. Every figure below says where it came from; check them,\n", dur(r.Duration))
	w.p("# and replace the inferred ones with what you know.\n\n")
	w.p("name = %s\n", quote(w.name))
	w.p("description = %s\n", quote(fmt.Sprintf("Calibrated from %s attempts over %s", count(r.Records), dur(r.Duration))))
	w.p("seed = 1%s# any seed: the traces do not give one\n", pad)
	w.p("duration = %s%s# the time the traces cover\n\n", quote(dur(math.Ceil(r.Duration))), pad)
}

const pad = "  "

func (w *tomlWriter) workload(r *Result) {
	wl := &r.Workload
	w.p("[workload]\n")
	w.p("# %d turns. %s.\n", wl.Turns, capital(wl.ModelReason))
	for _, c := range wl.Clamped {
		w.p("# %s.\n", c)
	}
	if wl.Closed {
		w.p("# %s sessions seen, %.2f turns each on average; %s.\n", count(wl.SessionsSeen), wl.MeanTurnsPerSession, wl.SessionsReason)
		w.p("sessions = %d\n", wl.Sessions)
		if wl.TurnsPerSession > 0 {
			w.p("turns = %d\n", wl.TurnsPerSession)
		}
		switch {
		case wl.ThinkZero:
			w.p("# think: every session started its next turn as soon as the last one ended: no think time.\n")
		default:
			w.dist("think", "think time between a session's turns", wl.Think, wl.think, w.name+"-think.txt")
		}
	} else {
		w.p("arrival_rate = %s%s# turns per second: %d turns over %s\n", num(wl.ArrivalRate), pad, wl.Turns, dur(r.Duration))
		w.p("arrival = %q%s# the gaps between turn starts vary with a coefficient of variation of %.2f (1 is Poisson, 0 evenly spaced)\n", wl.Arrival, pad, wl.ArrivalCV)
	}
	hasModel := wl.ModelCalls > 0 && (wl.ModelTurnShare >= 0.5 || len(r.Tools) == 0)
	if wl.ModelCalls > 0 {
		w.p("# model calls: %s, in %.1f%% of turns, to %s; tokens per call %s ± %s.\n",
			count(wl.ModelCalls), 100*wl.ModelTurnShare, wl.ModelService, num(wl.ModelTokensMean), num(wl.ModelTokensStd))
		if !hasModel {
			w.p("# Fewer than half the turns make one, so the scenario leaves them out.\n")
		} else if float64(wl.ModelCalls) > 1.2*float64(wl.Turns) {
			w.p("# Turns made %.2f model calls each; the scenario makes one per turn.\n", float64(wl.ModelCalls)/float64(wl.Turns))
		}
	}
	if hasModel {
		w.p("llm = { service = %s, tokens = %s }\n", quote(wl.ModelService), amount(wl.ModelTokensMean, wl.ModelTokensStd))
	}
	if len(r.Tools) == 0 {
		w.p("\n")
		return
	}
	var calls int64
	for _, t := range r.Tools {
		calls += t.Calls
	}
	w.p("# tool calls per turn (fan-out): %.2f on average, from %d to %d; the calls' tools in proportion to their counts.\n", wl.FanOutMean, wl.FanOutMin, wl.FanOutMax)
	var group string
	if len(r.Tools) == 1 {
		group = "tool = " + quote(r.Tools[0].Name)
	} else {
		parts := make([]string, len(r.Tools))
		for i, t := range r.Tools {
			parts[i] = fmt.Sprintf("%s = %d", tomlKey(t.Name), t.Calls)
		}
		group = "mix = { " + strings.Join(parts, ", ") + " }"
	}
	countVal := strconv.Itoa(wl.FanOutMin)
	if wl.FanOutMin != wl.FanOutMax {
		file := w.name + "-calls-per-turn.txt"
		w.empirical(file, "tool calls per turn", wl.fanOut, func(x float64) string { return strconv.Itoa(int(math.Round(x))) })
		w.p("# count: the recorded calls per turn, resampled (%s).\n", file)
		countVal = fmt.Sprintf("{ dist = \"empirical\", file = %s }", quote(file))
	}
	w.p("calls = [ { %s, count = %s } ]\n\n", group, countVal)
}

// dist writes a duration distribution: the lognormal fit when it is good,
// the recorded values in an empirical file when it is poor.
func (w *tomlWriter) dist(k, what string, f LognormalFit, s *sample, file string) {
	if f.Poor {
		w.p("# %s: the lognormal fit is poor (%s), so the %s recorded values are resampled from %s.\n", what, f.Reason, count(s.n), file)
		w.empirical(file, what+", in milliseconds", s, func(x float64) string { return num(x * 1000) })
		w.p("%s = { dist = \"empirical\", file = %s }\n", k, quote(file))
		return
	}
	d := f.Dist()
	w.p("# %s: lognormal fitted by maximum likelihood to %s values, μ = %.4f, σ = %.4f (of ln seconds);\n", what, count(f.N), f.Mu, f.Sigma)
	w.p("# KS distance %.4f ≤ %.4f (the larger of --ks-max and Lilliefors' 5%% critical value): a good fit", f.KS, f.KSMax)
	if f.Zeros > 0 {
		w.p(" (%s values of 0 left out)", count(f.Zeros))
	}
	w.p(".\n")
	w.p("%s = { dist = \"lognormal\", p50 = %s, p95 = %s }\n", k, quote(dur(d.Quantile(0.5))), quote(dur(d.Quantile(0.95))))
}

// empirical adds an empirical file holding s's quantiles.
func (w *tomlWriter) empirical(file, what string, s *sample, show func(float64) string) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s: %s, written by simbench calibrate\n", w.name, what)
	for _, x := range s.quantiles(empiricalPoints) {
		b.WriteString(show(x))
		b.WriteByte('\n')
	}
	w.files = append(w.files, File{Name: file, Data: b.Bytes()})
}

func (w *tomlWriter) service(s *ServiceFit, duration float64) {
	w.p("[%s]\n", toml.Key{"services", s.Name}.String())
	if s.TraceName != "" {
		w.p("# named %s in the traces; renamed to a name a scenario can hold.\n", quote(s.TraceName))
	}
	var parts []string
	for i, n := range s.Outcomes {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s (%.1f%%)", count(n), sched.Class(i), 100*float64(n)/float64(s.Attempts)))
		}
	}
	w.p("# %s attempts: %s.\n", count(s.Attempts), strings.Join(parts, ", "))
	if s.LimitSource != "" {
		w.p("# limits %s.\n", s.LimitSource)
		if s.Limits.RPS > 0 {
			w.p("rps = %s\n", num(s.Limits.RPS))
		}
		if s.Limits.RPM > 0 {
			w.p("rpm = %s\n", num(math.Ceil(s.Limits.RPM)))
		}
		if s.Limits.TPM > 0 {
			w.p("tpm = %s\n", num(math.Ceil(s.Limits.TPM)))
		}
		if s.Limits.MaxConcurrent > 0 {
			w.p("max_concurrent = %d\n", s.Limits.MaxConcurrent)
		}
	} else {
		w.p("# no limits: none were recorded and no 429 was seen.\n")
	}
	if s.latency.n > 0 {
		w.p("# recorded latency of successful attempts: p50 %s, p95 %s.\n", dur(s.P50), dur(s.P95))
		w.dist("latency", "latency", s.Latency, s.latency, w.name+"-"+atomicfile.SafeName(s.Name)+"-latency.txt")
		// A trace times attempts at the client, so the latency above holds
		// the network both ways already; the default delay would add it twice.
		w.p("network_delay = \"0s\"%s# the recorded latency includes the network both ways\n", pad)
	} else {
		w.p("# latency: no successful attempt to fit.\n")
	}
	if s.RateLimitedShare > 0 || s.OverloadedShare > 0 {
		w.p("# 429s were %.2f%% of attempts and 529s %.2f%%: the limits above produce the 429s; the 529s are not modelled.\n", 100*s.RateLimitedShare, 100*s.OverloadedShare)
	}
	switch s.Headers {
	case "openai":
		w.p("headers = \"openai\"%s# the responses announced their limits\n", pad)
	case "standard":
		w.p("headers = \"standard\"%s# the responses gave retry delays\n", pad)
	default:
		w.p("# headers: none recorded, so the service sends none.\n")
	}
	if s.ErrorRate > 0 {
		w.p("faults = { error_rate = %s }%s# transient failures (5xx, resets, timeouts) among answered attempts\n", num(min(round4(s.ErrorRate), 1)), pad)
	}
	w.p("\n")
}

func (w *tomlWriter) tools(r *Result) {
	for _, t := range r.Tools {
		w.p("[%s]\n", toml.Key{"tools", t.Name}.String())
		if t.TraceName != "" {
			w.p("# named %s in the traces; renamed to a name a scenario can hold.\n", quote(t.TraceName))
		}
		if t.Services > 1 {
			w.p("# the calls went to %d services; the scenario sends them all to the most used.\n", t.Services)
		}
		w.p("service = %s%s# %s calls\n", quote(t.Service), pad, count(t.Calls))
		if t.TokensMean > 0 {
			w.p("tokens = %s%s# tokens per call recorded: mean %s, standard deviation %s\n", amount(t.TokensMean, t.TokensStd), pad, num(t.TokensMean), num(t.TokensStd))
		}
		w.p("\n")
	}
}

func (w *tomlWriter) strategies(r *Result) {
	limited := false
	var cap float64
	var why []string
	for _, s := range r.Services {
		rate := max(s.Limits.RPS, s.Limits.RPM/60)
		if s.Limits.TPM > 0 && s.Attempts > 0 {
			// tokens per attempt turn a token limit into a request rate
			var tokens float64
			for _, t := range r.Tools {
				if t.Service == s.Name {
					tokens = max(tokens, t.TokensMean)
				}
			}
			if tokens > 0 {
				if tr := s.Limits.TPM / 60 / tokens; rate == 0 || tr < rate {
					rate = tr
				}
			}
		}
		if rate > 0 && s.latency.n > 0 {
			limited = true
			mean := s.latency.mean
			cap += 0.9 * rate * mean
			why = append(why, fmt.Sprintf("%s: 90%% of %s requests/s × %s mean latency", s.Name, num(round4(rate)), dur(mean)))
		}
	}
	n := int(math.Ceil(cap))
	if !limited {
		n = int(math.Ceil(r.MeanInFlight))
		why = []string{fmt.Sprintf("no limits are known: the %.1f attempts in flight on average in the traces (Little's law)", r.MeanInFlight)}
	}
	n = max(n, 2)
	retry := `retry = { backoff = "exponential", base = "500ms", cap = "8s", attempts = 3 }`
	w.p("# Strategies to compare: defaults to edit. The traces' calls made up to %d attempts", r.MaxAttempt)
	w.p(" (%s retries in all).\n", count(r.Retries))
	w.p("[[strategy]]\nname = \"sequential\"\ndescription = \"each turn runs its calls one at a time\"\nfan_out = 1\n%s\n\n", retry)
	w.p("[[strategy]]\nname = \"unbounded\"\ndescription = \"every call at once\"\n%s\n\n", retry)
	w.p("[[strategy]]\n# the cap: %s.\n", strings.Join(why, "; "))
	w.p("name = \"bounded-%d\"\n", n)
	w.p("description = %s\n", quote(fmt.Sprintf("%d in flight for the process", n)+map[bool]string{true: ", token bucket at 90% of the limits", false: ""}[limited]))
	w.p("max_in_flight = %d\n", n)
	if limited {
		w.p("token_bucket = true\nheadroom = 0.9\n")
	}
	w.p("retry = { backoff = \"full-jitter\", base = \"1s\", cap = \"60s\", attempts = 5 }\n")
}

// amount writes an amount distribution: a constant when it does not vary,
// else a normal distribution with the same mean and deviation.
func amount(mean, std float64) string {
	if std < 1e-9*max(1, mean) {
		return num(math.Round(mean))
	}
	// A scenario refuses a distribution that can draw more tokens than
	// a call may take (scenarios.MaxTokensPerCall) once in 10^12 draws,
	// about 7.1 deviations above the mean: such a tail is cut at the bound.
	if mean+8*std > scenarios.MaxTokensPerCall {
		return fmt.Sprintf("{ dist = \"normal\", mean = %s, stddev = %s, max = %d }", num(round4(mean)), num(round4(std)), scenarios.MaxTokensPerCall)
	}
	return fmt.Sprintf("{ dist = \"normal\", mean = %s, stddev = %s }", num(round4(mean)), num(round4(std)))
}

func round4(x float64) float64 {
	if x == 0 {
		return 0
	}
	p := math.Pow(10, 4-math.Ceil(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

// num writes a number as TOML: whole numbers without a point.
func num(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// dur writes seconds as a duration string, to the microsecond (at least
// 1µs, as a lognormal's p50 must be above 0).
func dur(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Microsecond)
	if d <= 0 {
		d = time.Microsecond
	}
	if d >= time.Second {
		d = d.Round(time.Millisecond)
	}
	return d.String()
}

// count writes a whole number with thousands separators.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && c != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
