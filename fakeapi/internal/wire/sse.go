package wire

import (
	"encoding/json"
	"iter"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/simbench/simbench/spec"
)

// Streamed answers: server-sent events in each API style, in groups sent
// over the answer's latency.

// maxStreamGroups caps the groups a stream is sent in: the server flushes
// each group at once and spreads the latency between groups.
const maxStreamGroups = 64

// sseGroups collects a streamed response of n pieces (tokens or tool calls)
// as at most maxStreamGroups groups of server-sent events, and hands each
// group to yield as soon as the events after it begin the next one: a
// stream holds one group's bytes at a time, not the whole answer. (Held
// whole, a 1,000-token answer of chat chunks is about 250 KB for the
// stream's whole latency, and 3,000 open streams were 2 GB.) Events must
// come in the order of their pieces, as every API's events do.
type sseGroups struct {
	n, groups int
	cur       int    // the group being collected
	buf       []byte // its bytes, reused from group to group
	yield     func(int, []byte) bool
	stopped   bool // yield returned false: the stream ended, drop the rest
}

// newSSEGroups returns the groups of a streamed response of n pieces,
// handed to yield in order.
func newSSEGroups(n int, yield func(int, []byte) bool) *sseGroups {
	return &sseGroups{groups: min(n, maxStreamGroups), n: n, yield: yield}
}

// to moves the collection on to group g, handing over every group before
// it (empty ones too); it reports false once the stream has ended.
func (s *sseGroups) to(g int) bool {
	for !s.stopped && s.cur < g {
		if !s.yield(s.cur, s.buf) {
			s.stopped = true
		}
		s.cur++
		s.buf = s.buf[:0]
	}
	return !s.stopped
}

// event appends an event of piece i ("" name: a data-only event) to the
// group that piece falls in; pieces fall in groups in order, evenly.
func (s *sseGroups) event(i int, name string, v any) {
	if !s.to(i * s.groups / s.n) {
		return
	}
	b, _ := json.Marshal(v) // plain maps and strings: cannot fail
	if name != "" {
		s.buf = append(s.buf, "event: "+name+"\n"...)
	}
	s.buf = append(s.buf, "data: "...)
	s.buf = append(s.buf, b...)
	s.buf = append(s.buf, "\n\n"...)
}

// frame appends, as event with event, a message of piece i in the AWS
// event-stream framing (eventFrame) to the group that piece falls in.
func (s *sseGroups) frame(i int, event string, v any) {
	if !s.to(i * s.groups / s.n) {
		return
	}
	b, _ := json.Marshal(v) // plain maps and strings: cannot fail
	s.buf = appendEventFrame(s.buf, event, b)
}

// raw appends bytes to the last group.
func (s *sseGroups) raw(b string) {
	if s.to(s.groups - 1) {
		s.buf = append(s.buf, b...)
	}
}

// finish hands over the last group and any empty ones before it.
func (s *sseGroups) finish() {
	if s.to(s.groups-1) && !s.yield(s.cur, s.buf) {
		s.stopped = true
	}
}

// streamedAnswer is Answer(out) as a stream sends it, piece by piece:
// out pieces, one per token (at most maxAnswerPieces).
func streamedAnswer(out int64) answerPieces {
	return answerPieces(min(max(out, 0), MaxAnswerPieces))
}

// answerPieces is a text answer of that many pieces, computed piece by
// piece: a stream holds no slice of them while it waits between groups.
type answerPieces int

// all yields the answer's pieces with their indexes.
func (a answerPieces) all() iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		for i := range int(a) {
			p := " ok"
			if i < len(answerHead) {
				p = answerHead[i]
			}
			if !yield(i, p) {
				return
			}
		}
	}
}

// text is the whole answer.
func (a answerPieces) text() string {
	var b strings.Builder
	for _, p := range a.all() {
		b.WriteString(p)
	}
	return b.String()
}

// StreamBody renders a streamed response as groups of server-sent events,
// one event per token of the answer, or per tool call of dec.reply, and
// returns them as a sequence of (index, bytes) rendered as they are ranged
// over (the bytes are valid until the next group), and how many groups
// there are. Chat completions follow OpenAI's chunks (a role chunk, content
// or tool_calls deltas, a chunk with finish_reason, a usage chunk when
// includeUsage, then "data: [DONE]"); messages follow Anthropic's events
// (message_start, content_block_start, ping, content_block_delta...,
// content_block_stop, message_delta with usage, message_stop); responses
// follow the Responses API's events (see responseEvents).
func StreamBody(api spec.APIStyle, ep Endpoint, id, model string, created time.Time, in, out int64, dec *Decoded) (iter.Seq2[int, []byte], int) {
	pieces := streamedAnswer(out)
	n := max(int(pieces), 1) // an empty answer still has its events
	if len(dec.Reply.Calls) > 0 {
		n = len(dec.Reply.Calls)
	}
	seq := func(yield func(int, []byte) bool) {
		groups := newSSEGroups(n, yield)
		ProviderOf(api).streamEvents(ep, groups, &answerArgs{id: id, model: model, created: created, in: in, out: out, dec: dec, pieces: pieces})
		groups.finish()
	}
	return seq, min(n, maxStreamGroups)
}

// argPieces splits a tool call's JSON arguments in two, as models stream
// them in several deltas.
func argPieces(args []byte) []string {
	h := len(args) / 2
	for h > 0 && !utf8.RuneStart(args[h]) {
		h-- // split between characters
	}
	if h == 0 {
		return []string{string(args)}
	}
	return []string{string(args[:h]), string(args[h:])}
}
