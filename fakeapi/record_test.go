package fakeapi

import (
	"cmp"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

// recordLog collects a server's records for a test.
type recordLog struct {
	mu   sync.Mutex
	recs []Record
}

func (l *recordLog) add(r Record) { l.mu.Lock(); l.recs = append(l.recs, r); l.mu.Unlock() }

func (l *recordLog) all() []Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Record(nil), l.recs...)
}

func TestRecordsSayWhatEachRequestWasTold(t *testing.T) {
	var log recordLog
	clk := &manualClock{}
	s, c := startServer(t, ServerConfig{Clock: clk.now, OnRequest: log.add, Services: []ServiceConfig{{Config: spec.Config{
		Name: "api", Headers: spec.HeadersOpenAI, RPS: 1, Burst: 1}}}})
	// The first is admitted; the second, a declared retry with a key,
	// meets the empty bucket and is told to wait a second.
	do(t, c, "POST", s.URL("api")+"/tools/x", `{"q":1}`, "X-Simbench-Client", "a")
	do(t, c, "POST", s.URL("api")+"/tools/x", `{"q":1}`, "X-Simbench-Client", "a", "Idempotency-Key", "k1", "X-Stainless-Retry-Count", "2")
	eventually(t, "two records", func() bool { return len(log.all()) == 2 })
	r := log.all()
	if r[0].Status != 200 || !r[0].Admitted || r[0].Kind != KindOK || r[0].Client != "a" || r[0].Attempt != 0 {
		t.Errorf("first record %+v", r[0])
	}
	if r[1].Status != 429 || r[1].Admitted || !r[1].HasRetryAfter || r[1].RetryAfter != time.Second ||
		r[1].IdempotencyKey != "k1" || r[1].Attempt != 3 {
		t.Errorf("second record %+v", r[1])
	}
	if r[0].Identity != r[1].Identity {
		t.Errorf("one client's same request has identities %x and %x", r[0].Identity, r[1].Identity)
	}
}

func TestRecordsTellCancelledFromWasted(t *testing.T) {
	for _, keep := range []bool{false, true} {
		var log recordLog
		s, c := startServer(t, ServerConfig{OnRequest: log.add, Services: []ServiceConfig{{Config: spec.Config{Name: "slow", Headers: spec.HeadersNone,
			KeepWorkingOnDisconnect: keep, Latency: spec.Dist[time.Duration]{Value: 200 * time.Millisecond}}}}})
		cancel, done := inFlightRequest(t, s, c, "slow", "/job", `{}`)
		cancel()
		<-done
		eventually(t, "the record", func() bool { return len(log.all()) == 1 })
		r := log.all()[0]
		if r.Cancelled == keep || r.Wasted != keep || r.Left == 0 || r.Left < r.Arrived || r.Answered < r.Left {
			t.Errorf("keep working %v: record %+v", keep, r)
		}
	}
}

// TestRecordOfAStreamEndsBeforeItsClientCanSendAgain checks that a client
// sending streamed requests one after another never has two in flight in
// the log: a stream's record ends when its last part goes out, before the
// client can read it and send the next.
func TestRecordOfAStreamEndsBeforeItsClientCanSendAgain(t *testing.T) {
	var log recordLog
	s, c := startServer(t, ServerConfig{OnRequest: log.add, Services: []ServiceConfig{{Config: spec.Config{Name: "llm",
		Latency: spec.Dist[time.Duration]{Value: 20 * time.Millisecond}}}}})
	for range 5 {
		res, err := c.Post(s.URL("llm")+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":8,"stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	eventually(t, "five records", func() bool { return len(log.all()) == 5 })
	r := log.all()
	slices.SortFunc(r, func(a, b Record) int { return cmp.Compare(a.Arrived, b.Arrived) })
	for i := 1; i < len(r); i++ {
		if r[i].Arrived < r[i-1].Answered {
			t.Errorf("stream %d arrived at %v, before stream %d was answered at %v", i, r[i].Arrived, i-1, r[i-1].Answered)
		}
	}
}

// TestEarlyRetriesKeepModelRoundsApart: a conversation (X-Simbench-Client,
// no retry marks) that asks a model has a tool call counted early only
// when it repeats a rate-limited one in the same model round; a client
// that never asks a model keeps the rule of one request at a time.
func TestEarlyRetriesKeepModelRoundsApart(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{
		{Config: spec.Config{Name: "llm", TPM: 1_000_000}},
		{Config: spec.Config{Name: "tools", RPS: 1}},
	}})
	conv := []string{"X-Simbench-Client", "conv"}
	model := func() { do(t, c, "POST", s.URL("llm")+"/v1/chat/completions", chatBody, conv...) }
	lookup := func(path string, client ...string) int {
		return do(t, c, "POST", s.URL("tools")+path, `{"q":1}`, client...).status
	}
	model()
	lookup("/tools/x", conv...) // admitted: the second in this second is a 429
	if st := lookup("/tools/x", conv...); st != 429 {
		t.Fatalf("status %d, want 429", st)
	}
	model()                     // the 429 handed to the model: a new round
	lookup("/tools/x", conv...) // the same call in the next round: not early, a 429 again
	lookup("/tools/x", conv...) // repeated in its round before the delay: early
	lookup("/tools/x", "X-Simbench-Client", "solo")
	lookup("/tools/y", "X-Simbench-Client", "solo") // one request at a time: early
	x := s.Stats().Services["tools"]
	if x.EarlyRetries != 2 || x.EarlyRetriesBy["client"] != 2 {
		t.Errorf("early retries %d (%v), want 2: one in conv's second round, one of solo", x.EarlyRetries, x.EarlyRetriesBy)
	}
}
