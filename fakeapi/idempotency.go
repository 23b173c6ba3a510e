package fakeapi

import (
	"net/http"
)

// Writes repeated under one idempotency key.
//
// A client that retries a write it cannot know the fate of (a timeout, a
// reset connection) sends it again; with an Idempotency-Key header (the
// convention of Stripe's API and of the IETF draft "The Idempotency-Key
// HTTP Header Field") the server can tell the retry from a new write. A
// write counts as applied once the model admits it to succeed — the work
// has begun, whether or not the client stays for the answer. A second
// write admitted under a key already applied is counted as applied twice
// (Stats.WritesAppliedTwice); a service with spec.Config.DedupeWrites
// answers it instead at once with 200 and the header Idempotent-Replayed:
// true, applying nothing and spending no quota (Stats.WritesDeduplicated).
// Keys are scoped to the API key, and only writes are looked at.

// ReplayedHeader marks an answer replayed for a write already applied.
const ReplayedHeader = "Idempotent-Replayed"

// writeKeys is what one service remembers of idempotency keys (guarded by
// the service's mu).
type writeKeys struct {
	applied        map[string]bool
	twice, deduped int64
}

// writeKey returns the identity of a write's idempotency key, or "" when
// the request is not a write or carries no key.
func writeKey(r *http.Request, in *incoming) string {
	k := r.Header.Get(IdempotencyHeader)
	if k == "" || !in.req.Write {
		return ""
	}
	return in.req.Key + "|" + k
}

// replayWrite answers a write whose key was already applied, when the
// service deduplicates, and reports whether it did.
func (s *Server) replayWrite(w http.ResponseWriter, r *http.Request, sv *service, in *incoming) bool {
	if !sv.cfg.DedupeWrites {
		return false
	}
	k := writeKey(r, in)
	if k == "" {
		return false
	}
	sv.mu.Lock()
	seen := sv.keys.applied[k]
	if seen {
		sv.keys.deduped++
	}
	sv.mu.Unlock()
	if !seen {
		return false
	}
	w.Header().Set(ReplayedHeader, "true")
	writeJSON(w, http.StatusOK, []byte(`{"idempotent_replay":true}`+"\n"))
	return true
}

// noteWrite records a write the model admitted to succeed under its key,
// counting it as applied twice when the key was applied before.
func (s *Server) noteWrite(r *http.Request, sv *service, in *incoming, d *Decision) {
	if d.Kind != KindOK || !d.Admitted() {
		return
	}
	k := writeKey(r, in)
	if k == "" {
		return
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.keys.applied == nil {
		sv.keys.applied = map[string]bool{}
	}
	if sv.keys.applied[k] {
		sv.keys.twice++
	}
	sv.keys.applied[k] = true
}

// addWriteKeys copies the service's counts into x (the caller holds sv.mu).
func (sv *service) addWriteKeys(x *Stats) {
	x.WritesAppliedTwice, x.WritesDeduplicated = sv.keys.twice, sv.keys.deduped
}
