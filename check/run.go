package check

import (
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
)

// RecordBudget is the memory, in bytes, check's request log may take at
// its peak: the records a Recorder keeps, their copy and their grading.
const RecordBudget = 1 << 30

// MaxRecords bounds the requests a Recorder keeps, so that the log stays
// within RecordBudget; later ones are counted but not graded. Measured
// (TestCheckRecordMemoryFitsTheCap, BenchmarkCheckRecordMemory, 100,000
// records with strings of their own): 322 B kept per record, 540 B held
// while the grades print (records, their copy, the report) and 489 B
// allocated by Grade, about 1.03 KB per record at the peak; 1,000,000
// records take about 0.96 GiB. (It was 4,194,304, about 4 GiB, while the
// comment said 1 GiB.)
const MaxRecords = 1_000_000

// Recorder collects a server's request log: pass its Add as
// fakeapi.ServerConfig.OnRequest. It is safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	recs    []fakeapi.Record
	dropped int64
}

// Add keeps one record (past MaxRecords, counts it as dropped), its
// client's name, API key, Idempotency-Key, path and resource bounded by
// Bound.
func (r *Recorder) Add(rec fakeapi.Record) {
	for _, s := range []*string{&rec.Client, &rec.Key, &rec.IdempotencyKey, &rec.Path, &rec.Resource} {
		*s = Bound(*s)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.recs) >= MaxRecords {
		r.dropped++
		return
	}
	r.recs = append(r.recs, rec)
}

// MaxName is the most bytes of a name a client gives (its
// X-Simbench-Client header, API key, Idempotency-Key, path or written
// resource) that check keeps and prints; see Bound.
const MaxName = 256

// Bound returns s when it is at most MaxName bytes long; else its first
// MaxName bytes (cut back to a whole UTF-8 character), an ellipsis and
// "#" with 8 hex digits of a hash of the whole of s, so that two long
// names with one beginning stay two names: at most MaxName+12 bytes.
func Bound(s string) string {
	if len(s) <= MaxName {
		return s
	}
	cut := MaxName
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	h := fnv.New32a()
	h.Write([]byte(s))
	return fmt.Sprintf("%s…#%08x", s[:cut], h.Sum32())
}

// Records returns a copy of the records kept and how many were dropped.
func (r *Recorder) Records() (recs []fakeapi.Record, dropped int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]fakeapi.Record(nil), r.recs...), r.dropped
}

// Environment returns the variables a client under check is started with,
// besides the caller's own: for every service SIMBENCH_URL_<SERVICE> (its
// base URL) and, for provider styles, the SDK variables (OPENAI_BASE_URL
// and OPENAI_API_KEY, ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY, of the
// first service of that style); for every tool SIMBENCH_TOOL_URL_<TOOL>;
// and SIMBENCH_STATS_URL. Names are upper case, other characters than
// letters and digits as underscores. The API keys are the service's first
// key, else "sk-simbench", so that no real key reaches the fake service.
func Environment(sc *scenarios.Scenario, srv *fakeapi.Server) []string {
	env := []string{"SIMBENCH_STATS_URL=" + srv.StatsURL(), "SIMBENCH_SCENARIO=" + sc.Name}
	sdk := map[spec.APIStyle]bool{}
	for _, svc := range sc.Services {
		env = append(env, "SIMBENCH_URL_"+envName(svc.Name)+"="+srv.URL(svc.Name))
		key := svc.ClientKey()
		if key == "" {
			key = "sk-simbench"
		}
		api := srv.API(svc.Name)
		prefix := srv.SDKEnv(svc.Name)
		if prefix != "" && !sdk[api] {
			sdk[api] = true
			env = append(env, prefix+"_BASE_URL="+srv.SDKBaseURL(svc.Name), prefix+"_API_KEY="+key)
		}
	}
	for _, t := range sc.Tools {
		env = append(env, "SIMBENCH_TOOL_URL_"+envName(t.Name)+"="+srv.URL(t.Service)+"/tools/"+t.Name)
	}
	return env
}

// envName turns a name into an environment variable's: upper case, other
// characters than letters and digits as underscores.
func envName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, s)
}
