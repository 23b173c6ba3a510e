package scenarios

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/simbench/simbench/spec"
)

// decodeService reads one [services.NAME] table. It checks what the file
// spells (types, unknown and missing keys, the bounds of the format);
// whether the service it describes can run is the one validator's call
// (spec.Config.Problems on Service.Model), whose problems it reports at
// their keys.
func (d *decoder) decodeService(t *table, name string) Service {
	defer t.finish()
	s := Service{Name: name, Limiter: spec.TokenBucket, Headers: spec.HeadersNone}
	s.RequestsPerSecond, _ = t.rate("rps", time.Second, MaxRequestsPerSecond, whyRPS)
	s.RequestsPerMinute, _ = t.rate("rpm", time.Minute, MaxRequestsPerMinute, whyCredit)
	s.TokensPerMinute, _ = t.rate("tpm", time.Minute, MaxTokensPerMinute, whyCredit)
	if n, ok := t.integer("max_concurrent", 1, MaxCap, whyCap); ok {
		s.MaxConcurrent = int(n)
	}
	s.Limiter = enum(t, "limiter", spec.TokenBucket, spec.Algorithms...)
	if b, ok := t.positive("burst", MaxRequestsPerMinute, whyCredit); ok {
		s.Burst = b
		if s.Limiter != spec.TokenBucket {
			// The file's own rule: Model drops the burst of another limiter.
			t.add("burst", "only applies to limiter = %q; remove it or change the limiter", spec.TokenBucket)
		}
	}
	s.CountRejected, _ = t.boolean("count_rejected")
	s.DedupeWrites, _ = t.boolean("dedupe_writes")
	if lat, ok := dist(t, "latency", durations, durationBound); ok {
		s.Latency = lat
	} else if !t.has("latency") {
		s.Latency = spec.Constant(time.Duration(0))
	}
	if lt := t.sub("load"); lt != nil {
		if n, ok := lt.integer("knee", 0, MaxCap, whyCap); ok {
			s.Load.Knee = int(n)
		}
		if f, ok := lt.positive("factor", MaxLoadFactor, "at most 100 times the latency per request in flight, so that latencies stay within a year"); ok {
			s.Load.Factor = f
		} else if !lt.has("factor") {
			d.add(lt.path, "missing factor; set factor = 0.01 for 1%% more latency per request in flight above knee")
		}
		lt.finish()
	}
	ft := t.sub("faults")
	if ft != nil {
		s.Faults = d.decodeFaults(ft)
	}
	// The provider shape the live server answers in; "" follows headers.
	s.API = enum(t, "api", "", spec.APIStyles...)
	// The file's default, not spec.DefaultHeaderStyle (see Service.Headers):
	// none, or the headers of the provider api names.
	defHeaders := spec.HeadersNone
	if s.API != "" {
		defHeaders = s.API.DefaultHeaders()
	}
	s.Headers = enum(t, "headers", defHeaders, spec.HeaderStyles...)
	// "none" reads as headers does; "" is the same truth-telling default.
	if s.Lying = enum(t, "lying", spec.LieNone, spec.LieNone, "none", spec.LieShort, spec.LieMissing); s.Lying == "none" {
		s.Lying = spec.LieNone
	}
	if s.Lying != spec.LieNone && s.Headers == spec.HeadersNone {
		// Without effect, so refused as the file's own rule: a service
		// without headers sends no retry delay to lie about.
		t.add("lying", "needs a Retry-After to lie about; set headers = \"openai\", \"anthropic\" or \"standard\"")
	}
	if s.Faults.RetryDelayBody != "" && s.Headers == spec.HeadersNone {
		// Without effect: a service without headers advertises no delay.
		ft.add("retry_delay_body", "needs a retry delay to send; set headers = \"openai\", \"anthropic\" or \"standard\"")
	}
	d.decodeKeys(t, &s)
	s.Projects = d.decodeProjects(t)
	if bt := t.sub("background"); bt != nil {
		s.Background = d.decodeBackground(bt)
	}
	s.NetworkDelay = DefaultNetworkDelay
	if nd, ok := dist(t, "network_delay", durations, durationBound); ok {
		s.NetworkDelay = nd
	}
	s.Generation = decodeGeneration(t)
	s.InputTokensPerMinute, _ = t.rate("input_tpm", time.Minute, MaxTokensPerMinute, whyCredit)
	s.OutputTokensPerMinute, _ = t.rate("output_tpm", time.Minute, MaxTokensPerMinute, whyCredit)
	s.Daily = decodeDaily(t)
	s.PricePer1kInput, _ = t.positive("price_per_1k_input", MaxPricePer1k, "dollars per 1,000 tokens")
	s.PricePer1kOutput, _ = t.positive("price_per_1k_output", MaxPricePer1k, "dollars per 1,000 tokens")
	for _, p := range s.Model().Problems() {
		d.add(s.problemPath(t.path, p.Key), "%s", p.Msg)
	}
	return s
}

// decodeKeys reads a service's API keys: each a string, or a table
// { key = "...", project = "...", rps, rpm, tpm, max_concurrent } giving the
// key its own limits and its project (nested limits).
func (d *decoder) decodeKeys(t *table, s *Service) {
	v, ok := t.get("keys")
	if !ok {
		return
	}
	arr, ok := v.([]any)
	if !ok {
		if ms, isTables := v.([]map[string]any); isTables {
			for _, m := range ms {
				arr = append(arr, m)
			}
		} else {
			t.add("keys", "wants an array of API keys, like keys = [\"a\", { key = \"b\", project = \"research\", rpm = 60 }], got %s", describe(v))
			return
		}
	}
	for i, e := range arr {
		path := fmt.Sprintf("%s[%d]", t.key("keys"), i)
		var k spec.Key
		switch e := e.(type) {
		case string:
			k.Key = e
		case map[string]any:
			kt := d.table(path, e)
			k = d.decodeKey(kt)
			path = kt.key("key")
		default:
			d.add(path, "wants an API key, a string or a table like { key = \"b\", rpm = 60 }, got %s", describe(e))
			continue
		}
		switch {
		case k.Key == "":
			d.add(path, "is empty; give the API key")
			continue
		case TextProblem(k.Key) != "":
			// A key travels in the Authorization header: CR LF in it would
			// inject another header.
			d.add(path, "the API key holds a line break or another control character; an API key is one line of printable text")
		}
		s.Keys = append(s.Keys, k.Key)
		if k != (spec.Key{Key: k.Key}) {
			if s.KeyLimits == nil {
				s.KeyLimits = map[string]spec.Key{}
			}
			s.KeyLimits[k.Key] = k
		}
	}
}

// decodeKey reads one key's table of keys.
func (d *decoder) decodeKey(t *table) spec.Key {
	defer t.finish()
	var k spec.Key
	if name, ok := t.str("key"); ok {
		k.Key = name
	} else if !t.has("key") {
		d.add(t.path, "missing key; write { key = \"sk-...\", rpm = 60 }")
	}
	k.Project, _ = t.str("project")
	k.RPS, k.RPM, k.TPM, k.MaxConcurrent = d.levelLimits(t)
	return k
}

// levelLimits reads the limits a key or a project sets of its own.
func (d *decoder) levelLimits(t *table) (rps, rpm, tpm int64, conc int) {
	whole := func(k string, per time.Duration, hi float64, why string) int64 {
		r, _ := t.rate(k, per, hi, why)
		return int64(math.Ceil(r))
	}
	rps = whole("rps", time.Second, MaxRequestsPerSecond, whyRPS)
	rpm = whole("rpm", time.Minute, MaxRequestsPerMinute, whyCredit)
	tpm = whole("tpm", time.Minute, MaxTokensPerMinute, whyCredit)
	if n, ok := t.integer("max_concurrent", 1, MaxCap, whyCap); ok {
		conc = int(n)
	}
	return rps, rpm, tpm, conc
}

// decodeProjects reads a service's [services.NAME.projects.PROJECT]
// tables, in file order: levels of nested limits between the
// organisation (the service) and its keys.
func (d *decoder) decodeProjects(t *table) []spec.Project {
	pt := t.sub("projects")
	if pt == nil {
		return nil
	}
	var ps []spec.Project
	for _, name := range pt.keys() {
		if msg := NameProblem("project", name); msg != "" {
			pt.add(name, "%s", msg)
		}
		if sub := pt.sub(name); sub != nil {
			p := spec.Project{Name: name}
			p.RPS, p.RPM, p.TPM, p.MaxConcurrent = d.levelLimits(sub)
			sub.finish()
			ps = append(ps, p)
		}
	}
	return ps
}

// problemPath is the file's path of the problem the validator reports at
// rel below the service at path: the validator numbers projects, the
// file names them, and a key written as a table has its limits below it.
func (s *Service) problemPath(path, rel string) string {
	var i int
	var rest string
	if n, err := fmt.Sscanf(rel, "projects[%d]", &i); n == 1 && err == nil && i < len(s.Projects) {
		_, rest, _ = strings.Cut(rel, "]")
		p := joinKey(joinKey(path, "projects"), s.Projects[i].Name)
		return keyBelow(p, strings.TrimPrefix(rest, "."))
	}
	return keyBelow(path, rel)
}

// decodeGeneration reads a service's time to first token and output
// tokens per second.
func decodeGeneration(t *table) spec.Generation {
	var g spec.Generation
	if ttft, ok := dist(t, "ttft", durations, durationBound); ok {
		g.TTFT = ttft
	}
	if tps, ok := dist(t, "tokens_per_s", amounts, tokensPerSecondBound); ok {
		if tps.Kind == spec.DistConstant && tps.Value == 0 {
			t.add("tokens_per_s", "is 0, so no answer would ever finish; set the output tokens per second, like tokens_per_s = 60, or remove it")
		} else {
			g.TokensPerSecond = tps
		}
	}
	return g
}

// decodeDaily reads a service's daily quota: rpd and tpd, and its clock
// (daily_reset, timezone, clock_start), whose strings the validator
// (spec.Daily) parses and reports at their keys.
func decodeDaily(t *table) spec.Daily {
	var d spec.Daily
	d.RPD, _ = t.integer("rpd", 1, spec.MaxLimit, "requests a day")
	d.TPD, _ = t.integer("tpd", 1, spec.MaxLimit, "tokens a day")
	d.Reset, _ = t.str("daily_reset")
	d.Zone, _ = t.str("timezone")
	d.Start, _ = t.str("clock_start")
	return d
}

// decodeBackground reads a service's unseen background traffic.
func (d *decoder) decodeBackground(t *table) spec.Background {
	defer t.finish()
	var b spec.Background
	if r, ok := t.rate("rate", time.Second, MaxBackgroundRate, "the fake service accrues background requests one by one"); ok {
		b.Rate = r
	} else if !t.has("rate") {
		d.add(t.path, "missing rate; write background = { rate = \"20/s\", tokens = 500 }")
	}
	b.Tokens, _ = t.integer("tokens", 0, MaxTokensPerCall, "tokens per request")
	b.Burst, _ = t.integer("burst", 1, MaxBackgroundBurst, "background requests arriving together")
	return b
}

func (d *decoder) decodeFaults(t *table) spec.Faults {
	defer t.finish()
	var f spec.Faults
	f.ErrorRate, _ = t.fraction("error_rate")
	f.HangRate, _ = t.fraction("hang_rate")
	f.ResetRate, _ = t.fraction("reset_rate")
	f.Conflict = decodeConflict(t)
	f.Credit, _ = t.integer("credit", 1, spec.MaxLimit, "tokens an account may spend")
	f.ContextWindow, _ = t.integer("context_window", 1, spec.MaxLimit, "tokens of a model's context")
	f.RetryDelayBody = enum(t, "retry_delay_body", "", spec.RetryDelayBodies...)
	if st := t.sub("slow_first_byte"); st != nil {
		f.SlowFirstByte.Rate, _ = st.fraction("rate")
		f.SlowFirstByte.Delay, _ = st.duration("delay")
		for _, k := range []string{"rate", "delay"} {
			if !st.has(k) {
				d.add(st.path, "missing %s; write slow_first_byte = { rate = 0.05, delay = \"2s\" }", k)
			}
		}
		st.finish()
	}
	if ot := t.sub("overload"); ot != nil {
		f.Overload.Every, _ = ot.duration("every")
		f.Overload.Length, _ = ot.duration("length")
		f.Overload.Rate = 1
		if r, ok := ot.fraction("rate"); ok {
			if r == 0 {
				ot.add("rate", "is 0, so an episode would reject nothing; set the share of requests it rejects (1 when omitted), or remove overload")
			}
			f.Overload.Rate = r
		}
		switch {
		case !ot.has("every") || !ot.has("length"):
			d.add(ot.path, "needs every and length; write overload = { every = \"5m\", length = \"20s\" }")
		case f.Overload.Every == 0:
			ot.add("every", "is 0; set the mean time between episodes, like every = \"5m\"")
		case f.Overload.Every < MinOverloadEvery:
			ot.add("every", "is %v; it must be at least %v: the service steps through episodes one gap at a time, so shorter gaps only spin", f.Overload.Every, MinOverloadEvery)
		}
		ot.finish()
	}
	return f
}

// decodeConflict reads faults.conflict: true (every overlapping write
// conflicts), false, or a fraction, the probability that one does.
func decodeConflict(t *table) float64 {
	v, ok := t.get("conflict")
	if !ok {
		return 0
	}
	switch v := v.(type) {
	case bool:
		if v {
			return 1
		}
		return 0
	case int64, float64:
		f, _ := t.fraction("conflict")
		return f
	}
	t.add("conflict", "wants true, false or a fraction, like conflict = true or conflict = 0.5, got %s", describe(v))
	return 0
}

func (d *decoder) decodeTool(sc *Scenario, t *table, name string) Tool {
	defer t.finish()
	tool := Tool{Name: name, Kind: KindRead}
	tool.Service, tool.Tokens = d.serviceAndTokens(sc, t, true)
	tool.Kind = enum(t, "kind", KindRead, KindRead, KindWrite)
	if r, ok := t.str("resource"); ok {
		tool.Resource = r
		if msg := TextProblem(r); msg != "" {
			t.add("resource", "%s", msg)
		} else if tool.Kind != KindWrite {
			t.add("resource", "only applies to kind = \"write\" (reads are never serialized); remove it or make the tool a write")
		}
	}
	if idem, ok := t.boolean("idempotent"); ok {
		// On a write it allows retries; on a read (always safe to retry)
		// it allows hedges (a strategy's hedge_after, hedge_percentile).
		tool.Idempotent = idem
	}
	if from, ok := t.str("resource_from"); ok {
		if tool.Kind != KindWrite {
			t.add("resource_from", "only applies to kind = \"write\" (reads never race); remove it or make the tool a write")
		} else if r, err := spec.ParseResourceFrom(from); err != nil {
			t.add("resource_from", "%v", err)
		} else {
			tool.ResourceFrom = r
		}
	}
	return tool
}

// keyBelow appends rel, a dotted path of bare segments each with an
// optional [i] (as a spec.Problem's Key), to the key path path.
func keyBelow(path, rel string) string {
	if rel == "" {
		return path
	}
	for seg := range strings.SplitSeq(rel, ".") {
		name, index, _ := strings.Cut(seg, "[")
		path = joinKey(path, name)
		if index != "" {
			path += "[" + index
		}
	}
	return path
}
