package fakeapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// The accounting endpoints and summaries of a server.

// Paths of the accounting endpoints, on every listener.
const (
	// StatsPath answers GET with ServerStats as JSON.
	StatsPath = "/_simbench/stats"
	// ResetPath clears the accounting and empties the rate limiters on
	// POST.
	ResetPath = "/_simbench/reset"
)

// ServerStats is the accounting of every service on a server, as served at
// StatsPath.
type ServerStats struct {
	// Services maps service names to their accounting.
	Services map[string]Stats `json:"services"`
	// NotFound counts requests to paths no service answers.
	NotFound int64 `json:"not_found"`
}

// StatsURL returns the URL of the accounting endpoint (on the first listener).
func (s *Server) StatsURL() string { return s.listeners[0].url + StatsPath }

// Stats returns every service's accounting.
func (s *Server) Stats() ServerStats {
	st := ServerStats{Services: make(map[string]Stats, len(s.services)), NotFound: s.notFound.Load()}
	for _, sv := range s.services {
		sv.mu.Lock()
		x := sv.m.Stats()
		x.EarlyRetriesBy = make(map[string]int64, numRetryRules)
		for i, n := range sv.earlyBy {
			x.EarlyRetriesBy[retryRuleNames[i]] = n
		}
		sv.addWriteKeys(&x)
		st.Services[sv.cfg.Name] = x
		sv.mu.Unlock()
	}
	return st
}

// Reset clears every service's accounting and empties its rate limiters
// (Model.ResetLimiters), so a client starts afresh; requests in flight run
// on.
func (s *Server) Reset() {
	for _, sv := range s.services {
		sv.mu.Lock()
		sv.m.ResetStats()
		sv.m.ResetLimiters()
		sv.earlyBy = [numRetryRules]int64{}
		sv.keys = writeKeys{}
		sv.mu.Unlock()
	}
	s.notFound.Store(0)
	s.roundsMu.Lock()
	clear(s.rounds)
	s.roundsMu.Unlock()
	if s.metrics != nil {
		s.metrics.reset()
	}
}

func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == StatsPath && r.Method == http.MethodGet:
		b, err := json.MarshalIndent(s.Stats(), "", "  ")
		if err != nil {
			writeJSON(w, 500, wire.ErrorBody(spec.APIGeneric, 500, err.Error(), nil))
			return
		}
		writeJSON(w, 200, append(b, '\n'))
	case r.URL.Path == ResetPath && r.Method == http.MethodPost:
		if status, msg := s.authorizeReset(apiKey(r)); status != 0 {
			writeJSON(w, status, wire.ErrorBody(spec.APIGeneric, status, msg, nil))
			return
		}
		s.Reset()
		writeJSON(w, 200, []byte(`{"ok":true}`+"\n"))
	case r.URL.Path == StatsPath || r.URL.Path == ResetPath:
		writeJSON(w, http.StatusMethodNotAllowed, wire.ErrorBody(spec.APIGeneric, 405, "use GET "+StatsPath+" or POST "+ResetPath, nil))
	default:
		s.serveNotFound(w, r)
	}
}

// authorizeReset decides whether a reset with key may go ahead: always when
// no service configures keys, else only with one of the keys some service
// accepts. It returns 0, or the status and message of the refusal.
func (s *Server) authorizeReset(key string) (status int, msg string) {
	keyed := false
	for _, sv := range s.services {
		for _, k := range sv.cfg.Keys {
			if k.Key == key {
				return 0, ""
			}
			keyed = true
		}
	}
	switch {
	case !keyed:
		return 0, ""
	case key == "":
		return http.StatusUnauthorized, "resetting the accounting needs an API key of one of the services (Authorization: Bearer KEY or x-api-key: KEY)"
	}
	return http.StatusForbidden, "resetting the accounting needs an API key of one of the services; this key is none of them"
}

func (s *Server) serveNotFound(w http.ResponseWriter, r *http.Request) {
	s.notFound.Add(1)
	var known []string
	for _, sv := range s.services {
		prefix := ""
		if !s.cfg.PortPerService {
			prefix = "/" + sv.cfg.Name
		}
		for _, k := range wire.KnownPaths(sv.cfg.API) {
			known = append(known, prefix+k)
		}
	}
	known = append(known, StatsPath, ResetPath)
	if s.metrics != nil {
		known = append(known, MetricsPath)
	}
	writeJSON(w, http.StatusNotFound, wire.ErrorBody(spec.APIGeneric, 404,
		fmt.Sprintf("no service answers %s; known paths: %s", r.URL.Path, strings.Join(known, ", ")),
		map[string]any{"known": known}))
}

// Summary writes one line per service: its base URL, the SDK base URL for
// provider styles (OpenAI SDKs take URL+"/v1"; Anthropic SDKs take URL
// itself, since they append /v1/messages; AzureOpenAI takes URL as its
// endpoint and @google/genai as its base URL), and its API keys; then the
// stats URL.
func (s *Server) Summary(w io.Writer) {
	for _, sv := range s.services {
		fmt.Fprintf(w, "%-12s %s", sv.cfg.Name, sv.url)
		switch env := s.SDKEnv(sv.cfg.Name); {
		case env != "":
			base := s.SDKBaseURL(sv.cfg.Name)
			fmt.Fprintf(w, "  (%s SDK base URL: %s, %s_BASE_URL=%s)", sv.cfg.API, base, env, base)
		case sv.cfg.API != spec.APIGeneric:
			// A provider whose SDK reads no one prefix's variables.
			fmt.Fprintf(w, "  (%s SDK base URL: %s)", sv.cfg.API, s.SDKBaseURL(sv.cfg.Name))
		}
		if len(sv.cfg.Keys) > 0 {
			keys := make([]string, len(sv.cfg.Keys))
			for i, k := range sv.cfg.Keys {
				keys[i] = k.Key
			}
			fmt.Fprintf(w, "  keys: %s", strings.Join(keys, ", "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "stats        %s\n", s.StatsURL())
	if s.metrics != nil {
		fmt.Fprintf(w, "metrics      %s\n", s.MetricsURL())
	}
}

// WriteStats writes a human-readable accounting summary, one block per
// service in name order.
func WriteStats(w io.Writer, st ServerStats) {
	names := make([]string, 0, len(st.Services))
	for n := range st.Services {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		x := st.Services[n]
		fmt.Fprintf(w, "%s: %d arrived, %d accepted, %d completed, %d rate limited (rps %d, rpm %d, tpm %d, concurrency %d)\n",
			n, x.Arrived, x.Accepted, x.Completed, x.RateLimited,
			x.RateLimitedBy["rps"], x.RateLimitedBy["rpm"], x.RateLimitedBy["tpm"], x.RateLimitedBy["concurrency"])
		if _, ok := x.RateLimitedBy["itpm"]; ok {
			fmt.Fprintf(w, "  rate limited by input tokens per minute %d\n", x.RateLimitedBy["itpm"])
		}
		if _, ok := x.RateLimitedBy["otpm"]; ok {
			fmt.Fprintf(w, "  rate limited by output tokens per minute %d\n", x.RateLimitedBy["otpm"])
		}
		for _, k := range x.Keys {
			in := ""
			if k.Project != "" {
				in = " (project " + k.Project + ")"
			}
			share := 0.0
			if n := k.Admitted + k.RateLimited; n > 0 {
				share = 100 * float64(k.RateLimited) / float64(n)
			}
			fmt.Fprintf(w, "  key %s%s: %d admitted, %d rate limited (%.1f%%) by key %d, project %d, organization %d\n",
				k.Key, in, k.Admitted, k.RateLimited, share, k.RateLimitedBy["key"], k.RateLimitedBy["project"], k.RateLimitedBy["organization"])
		}
		fmt.Fprintf(w, "  early retries %d, cancelled by client %d, wasted %d (%.3fs, %d tokens), write races %d, peak concurrency %d\n",
			x.EarlyRetries, x.CancelledByClient, x.Wasted, x.WastedWorkS, x.WastedTokens, x.WriteRaces, x.PeakConcurrency)
		if x.Conflicts > 0 {
			fmt.Fprintf(w, "  write conflicts (409) %d\n", x.Conflicts)
		}
		if x.WritesAppliedTwice > 0 || x.WritesDeduplicated > 0 {
			fmt.Fprintf(w, "  retried writes applied twice %d, deduplicated %d\n", x.WritesAppliedTwice, x.WritesDeduplicated)
		}
		if x.EarlyRetries > 0 && len(x.EarlyRetriesBy) > 0 {
			fmt.Fprintf(w, "  early retries identified by idempotency key %d, retry count %d, client header %d\n",
				x.EarlyRetriesBy["idempotency_key"], x.EarlyRetriesBy["retry_count"], x.EarlyRetriesBy["client"])
		}
		var errs []string
		for _, k := range errorKinds {
			if v := x.Errors[k.String()]; v > 0 {
				errs = append(errs, fmt.Sprintf("%s %d", k, v))
			}
		}
		if len(errs) > 0 {
			fmt.Fprintf(w, "  errors: %s\n", strings.Join(errs, ", "))
		}
	}
	if st.NotFound > 0 {
		fmt.Fprintf(w, "not found: %d\n", st.NotFound)
	}
}
