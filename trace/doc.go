// Package trace defines simbench's per-attempt trace format and streams it:
// one JSON object per line (JSON Lines), a [Header] line starting each
// section (one run of one strategy), then one [Record] line per attempt of
// every call. README.md in this directory is the format reference.
//
// [Create] writes a trace to a temporary file beside its path and renames
// it into place on [Writer.Close], so a reader never sees half a trace; the
// writer buffers a fixed 256 KiB whatever the trace's length and is safe
// for concurrent use. [NewReader] reads one line at a time: memory does
// not grow with the file, and a bad line is reported as an [*Error] with
// its line number.
//
// A simulator or a live driver writes, per attempt, when its outcome is
// known:
//
//	w, err := trace.Create(path)
//	…
//	w.Header(trace.Header{Scenario: sc.Name, Strategy: st.Name, Seed: seed, Mode: "virtual"})
//	w.Write(trace.Record{Session: 3, Turn: 17, Call: "c1", Service: "openai", Tool: "lookup",
//		Attempt: 1, Intended: 1.5, Start: 1.75, End: 2.125,
//		Outcome: outcome.Class.String(), Status: 429, RetryAfter: 1, HasRetryAfter: true})
//	…
//	err = w.Close() // or w.Abort() when the run failed
package trace
