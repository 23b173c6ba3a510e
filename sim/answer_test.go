package sim

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/httptool"
	"github.com/simbench/simbench/spec"
)

// answerStyles are the header styles a fake service answers in.
var answerStyles = []spec.HeaderStyle{spec.HeadersOpenAI, spec.HeadersAnthropic, spec.HeadersStandard, spec.HeadersNone}

// answerReq is one request of an answer case: a generic-endpoint GET of a
// tool, or a PUT of a resource (a write), with a token count.
type answerReq struct {
	write  bool
	tokens int64
	key    string
	body   string
}

// answerCase makes one fakeapi outcome kind happen: the requests before
// the one read (each answered and finished) and the one read.
type answerCase struct {
	name  string
	kind  fakeapi.Kind
	setup func(c *fakeapi.ServiceConfig)
	// before are sent first; overlap keeps the last of them in service
	// while the read request arrives (a write conflict needs two at once).
	before  []answerReq
	overlap bool
	req     answerReq
}

func one() *float64 { x := 1.0; return &x }

var answerCases = []answerCase{
	{name: "ok", kind: fakeapi.KindOK, req: answerReq{tokens: 100}},
	{name: "ok with ITPM and OTPM", kind: fakeapi.KindOK, setup: func(c *fakeapi.ServiceConfig) { c.InputTPM, c.OutputTPM = 5_000, 200_000 },
		before: []answerReq{{tokens: 4_000}}, req: answerReq{tokens: 100}},
	{name: "rate limited (rpm)", kind: fakeapi.KindRateLimited, before: []answerReq{{tokens: 10}, {tokens: 10}, {tokens: 10}}, req: answerReq{tokens: 10}},
	{name: "rate limited (tpm)", kind: fakeapi.KindRateLimited, before: []answerReq{{tokens: 9_000}}, req: answerReq{tokens: 2_000}},
	{name: "rate limited, no retry delay", kind: fakeapi.KindRateLimited, setup: func(c *fakeapi.ServiceConfig) { c.Lie = spec.LieMissing },
		before: []answerReq{{tokens: 10}, {tokens: 10}, {tokens: 10}}, req: answerReq{tokens: 10}},
	{name: "rate limited, a short retry delay", kind: fakeapi.KindRateLimited, setup: func(c *fakeapi.ServiceConfig) { c.Lie = spec.LieShort },
		before: []answerReq{{tokens: 10}, {tokens: 10}, {tokens: 10}}, req: answerReq{tokens: 10}},
	{name: "server error 500", kind: fakeapi.KindServerError, setup: func(c *fakeapi.ServiceConfig) { c.Faults.ErrorRate = 1 }, req: answerReq{tokens: 10}},
	{name: "server error 503", kind: fakeapi.KindServerError, setup: func(c *fakeapi.ServiceConfig) { c.Faults.ErrorRate, c.Faults.ErrorStatus = 1, 503 },
		req: answerReq{tokens: 10}},
	{name: "reset", kind: fakeapi.KindReset, setup: func(c *fakeapi.ServiceConfig) { c.Faults.ResetRate = 1 }, req: answerReq{tokens: 10}},
	{name: "overloaded 529", kind: fakeapi.KindOverloaded, setup: func(c *fakeapi.ServiceConfig) {
		c.Events = []spec.Event{{At: 0, For: time.Hour, OverloadRate: one()}}
	}, req: answerReq{tokens: 10}},
	{name: "overloaded 503 (outage)", kind: fakeapi.KindOverloaded, setup: func(c *fakeapi.ServiceConfig) {
		c.Events = []spec.Event{{At: 0, For: time.Hour, Outage: true}}
	}, req: answerReq{tokens: 10}},
	{name: "unauthorized", kind: fakeapi.KindUnauthorized, setup: func(c *fakeapi.ServiceConfig) {
		c.Keys = []spec.Key{{Key: "right", RPM: 3, TPM: 10_000}}
	}, req: answerReq{tokens: 10, key: "wrong"}},
	{name: "too large", kind: fakeapi.KindTooLarge, req: answerReq{tokens: 20_000}},
	{name: "bad request", kind: fakeapi.KindBadRequest, req: answerReq{tokens: 10, body: "not json"}},
	{name: "conflict", kind: fakeapi.KindConflict, setup: func(c *fakeapi.ServiceConfig) {
		c.Faults.Conflict = 1
		c.Latency = spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 300 * time.Millisecond}
	}, before: []answerReq{{write: true, tokens: 10}}, overlap: true, req: answerReq{write: true, tokens: 10}},
	// A hang is never answered: the client's timeout or a cancel ends it,
	// and the engine reads nothing (see engine.arrive).
}

// answerConfig is a case's service: 3 requests/min, 10,000 tokens/min,
// no latency unless the case sets one, in style.
func answerConfig(c *answerCase, style spec.HeaderStyle) fakeapi.ServiceConfig {
	cfg := fakeapi.ServiceConfig{Config: spec.Config{Name: "s", RPM: 3, TPM: 10_000, Headers: style}}
	if c.setup != nil {
		c.setup(&cfg)
	}
	return cfg
}

// request is what the server makes of r (the generic endpoint, tokens in
// a header, a PUT a write of its path).
func (r answerReq) request() fakeapi.Request {
	q := fakeapi.Request{Method: http.MethodGet, Path: "/tools/t", Key: r.key, Tokens: r.tokens, Bytes: int64(len(r.body)), Malformed: r.body != ""}
	if r.write {
		q.Method, q.Path, q.Write = http.MethodPut, "/resources/r", true
	}
	return q
}

// send makes r's HTTP request on the loopback server.
func (r answerReq) send(ctx context.Context, srv *fakeapi.Server, now func() time.Time) sched.Outcome {
	tool := &httptool.Tool{Now: now, Build: func(ctx context.Context, call *sched.Call, _ int) (*http.Request, error) {
		q := r.request()
		req, err := http.NewRequestWithContext(ctx, q.Method, srv.URL("s")+q.Path, strings.NewReader(r.body))
		if err != nil {
			return nil, err
		}
		req.Header.Set(fakeapi.TokensHeader, strconv.FormatInt(r.tokens, 10))
		if r.key != "" {
			req.Header.Set("Authorization", "Bearer "+r.key)
		}
		return req, nil
	}}
	return tool.Execute(ctx, &sched.Call{ID: "c", Service: "s"}, 1)
}

// TestAnswerLoopbackAndVirtual drives every fakeapi outcome kind in every
// header style through a real answer (fakeapi's server on 127.0.0.1, read
// by httptool.Tool) and through the virtual path (a twin of the server's
// model, read by the engine's answerReader), and asserts that both read
// the same class, status, retry delay and quota. The server's model time
// is a fixed clock a fraction of a second past a whole one, and its wall
// clock starts at the engine's virtual epoch, so that anthropic's resets
// in whole seconds read the same both ways.
func TestAnswerLoopbackAndVirtual(t *testing.T) {
	const now = 1234567891 * time.Nanosecond
	for _, style := range answerStyles {
		for i := range answerCases {
			c := &answerCases[i]
			t.Run(fmt.Sprintf("%s/%s", style, c.name), func(t *testing.T) {
				cfg := answerConfig(c, style)
				srv, err := fakeapi.Start(fakeapi.ServerConfig{Services: []fakeapi.ServiceConfig{cfg}, Seed: 7, Warn: io.Discard,
					Clock: func() time.Duration { return now }})
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Close()
				srv.SetEpoch(virtualEpoch)
				// The server's model draws from this stream (see fakeapi.Start).
				h := fnv.New64a()
				h.Write([]byte(cfg.Name))
				twin, err := fakeapi.NewModel(cfg, rand.New(rand.NewPCG(7, h.Sum64())))
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				var inService sync.WaitGroup
				var ids []fakeapi.ID
				for k, r := range c.before {
					d := twin.Arrive(now, r.request())
					if c.overlap && k == len(c.before)-1 {
						ids = append(ids, d.ID)
						inService.Add(1)
						go func() { defer inService.Done(); r.send(ctx, srv, time.Now) }()
						waitAccepted(t, srv, int64(k+1))
						continue
					}
					if d.Admitted() {
						twin.Finish(now, d.ID, false)
					}
					r.send(ctx, srv, time.Now)
				}
				d := twin.Arrive(now, c.req.request())
				if d.Kind != c.kind {
					t.Fatalf("the twin model decided %v, want %v", d.Kind, c.kind)
				}
				arrived := answerAt(&d, now, 0)
				live := c.req.send(ctx, srv, func() time.Time { return virtualEpoch.Add(arrived) })
				inService.Wait()
				for _, id := range ids {
					twin.Finish(now, id, false)
				}
				read := newAnswerReader(twin.Config()).read(&d, now, arrived)
				virtual := read.outcome()
				if live.Class != virtual.Class || live.Status != virtual.Status || live.HasRetryAfter != virtual.HasRetryAfter ||
					live.RetryAfter != virtual.RetryAfter || live.Quota != virtual.Quota {
					t.Errorf("live and virtual read the %v answer differently:\n live    %v\n virtual %v", d.Kind, describe(live), describe(virtual))
				}
			})
		}
	}
}

// describe is the part of an outcome the readers must agree on.
func describe(o sched.Outcome) string {
	return fmt.Sprintf("class %v status %d retry %v/%v quota %+v", o.Class, o.Status, o.HasRetryAfter, o.RetryAfter, o.Quota)
}

// waitAccepted waits until the server has admitted n requests. The bound
// only keeps a broken build from hanging the test.
func waitAccepted(t *testing.T, srv *fakeapi.Server, n int64) {
	t.Helper()
	for range 10_000 {
		if srv.Stats().Services["s"].Accepted >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("the server never admitted %d requests", n)
}

// readHeaders is the reference reading of decision d's answer: its
// headers written as the server writes them (Decision.Answer) and read by
// httptool.Read, or httptool.ReadBody with the body the server sends when
// it says more (hasBody), as a live client reads a real answer.
func readHeaders(r *answerReader, d *fakeapi.Decision, decided, arrived time.Duration) sched.Outcome {
	h := http.Header{}
	status := d.Answer(r.api, r.style, virtualEpoch.Add(decided), h)
	if httptool.StatusClass(status) != sched.ClassSuccess && status != 0 && hasBody(d) {
		return httptool.ReadBody(status, h, d.RejectionBody(&r.cfg, status), virtualEpoch.Add(arrived))
	}
	return httptool.Read(status, h, virtualEpoch.Add(arrived))
}

// answerShape is what kind of answer a read was, for the coverage
// TestAnswerValuesAndHeaders asks of every header style.
type answerShape struct {
	status     int
	retryAfter bool // the answer sent a Retry-After header
	quota      bool // quota headers were read
	withBody   bool // the body said more than the headers (hasBody)
}

// TestAnswerValuesAndHeaders holds the engine's reading of answers (the
// rate-limit headers as values, httptool.ReadValues) equal to writing the
// headers and reading them (readHeaders), over models in every header
// style and API style with request, token, input- and output-token
// limits, concurrency limits, lying retry delays, delays in the body,
// server errors, resets, 529 episodes, outages, spent credit and contexts
// too long, at many times and token counts, so that buckets are full, part
// spent and in debt. Each style must have read a 2xx, a 429 with and
// without a retry delay, a 5xx, a 529 and a 503, with and without quota
// headers where the style sends them.
func TestAnswerValuesAndHeaders(t *testing.T) {
	configs := []func(*fakeapi.ServiceConfig){
		func(c *fakeapi.ServiceConfig) { c.RPM, c.TPM = 600, 100_000 },
		func(c *fakeapi.ServiceConfig) { c.RPS, c.TPM = 5, 50_000; c.Faults.ErrorRate = 0.1 },
		func(c *fakeapi.ServiceConfig) {
			c.RPM, c.InputTPM, c.OutputTPM = 120, 20_000, 8_000
			c.Faults.Overload = spec.Overload{Every: 20 * time.Second, Length: 10 * time.Second, Rate: 0.5}
		},
		func(c *fakeapi.ServiceConfig) {
			c.TPM, c.InputTPM = 30_000, 20_000
			c.Algorithm = spec.SlidingWindow
			c.Lie = spec.LieShort
		},
		func(c *fakeapi.ServiceConfig) {
			c.RPM = 60
			c.Algorithm = spec.FixedWindow
			c.Lie = spec.LieMissing
			c.Faults.ErrorRate, c.Faults.ErrorStatus, c.Faults.ResetRate = 0.05, 502, 0.05
		},
		func(c *fakeapi.ServiceConfig) {
			c.MaxConcurrent, c.ConcurrencyRetryAfter = 2, 1500*time.Millisecond
			c.Faults.RetryDelayBody = spec.RetryDelayBesides
			c.Events = []spec.Event{{At: 30 * time.Second, For: 10 * time.Second, Outage: true}}
		},
		func(c *fakeapi.ServiceConfig) {
			c.RPM, c.TPM = 30, 20_000
			c.Faults.RetryDelayBody = spec.RetryDelayInstead
			c.Faults.ContextWindow = 2_500
		},
		func(c *fakeapi.ServiceConfig) { c.RPM, c.TPM = 300, 40_000; c.Faults.Credit = 100_000 },
	}
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for _, style := range answerStyles {
		seen := map[answerShape]int{}
		for _, api := range spec.APIStyles {
			for ci, set := range configs {
				cfg := fakeapi.ServiceConfig{Config: spec.Config{Name: "s", Headers: style, API: api}}
				set(&cfg)
				m, err := fakeapi.NewModel(cfg, rand.New(rand.NewPCG(3, uint64(ci))))
				if err != nil {
					t.Fatal(err)
				}
				r := newAnswerReader(m.Config())
				var now time.Duration
				var open []fakeapi.ID // admitted, finished two arrivals later
				for range 400 {
					now += time.Duration(rng.Int64N(int64(400 * time.Millisecond)))
					req := fakeapi.Request{Client: "c", Tokens: rng.Int64N(3_000), OutputTokens: rng.Int64N(1_000)}
					d := m.Arrive(now, req)
					if d.Admitted() && d.Kind != fakeapi.KindHang {
						open = append(open, d.ID)
					}
					if len(open) > 2 {
						m.Finish(now, open[0], false)
						open = open[1:]
					}
					back := time.Duration(rng.Int64N(int64(2 * time.Second)))
					arrived := answerAt(&d, now, back)
					got, want := r.read(&d, now, arrived), readHeaders(r, &d, now, arrived)
					o := got.outcome()
					if o.Class != want.Class || o.Status != want.Status || o.HasRetryAfter != want.HasRetryAfter ||
						o.RetryAfter != want.RetryAfter || o.Quota != want.Quota {
						t.Fatalf("%s, %s, config %d, at %v, %v: values read\n %s\nheaders read\n %s", style, api, ci, now, d.Kind, describe(o), describe(want))
					}
					v := d.RateHeaders(style, virtualEpoch.Add(now))
					seen[answerShape{status: want.Status, retryAfter: v.HasRetryAfter, quota: want.Quota != sched.ServerQuota{},
						withBody: hasBody(&d)}]++
					n++
				}
			}
		}
		quota, retry := style == spec.HeadersOpenAI || style == spec.HeadersAnthropic, style != spec.HeadersNone
		shapes := []answerShape{
			{status: 200, quota: quota},
			{status: 429, retryAfter: retry, quota: quota},
			{status: 429, quota: quota}, // a lie: no delay
			{status: 500, quota: quota},
			{status: 502, quota: quota},
			{status: 503},                 // an outage
			{status: 529},                 // an overload episode
			{status: 400, withBody: true}, // context too long
			{status: 0},                   // a reset
		}
		if retry {
			shapes = append(shapes, answerShape{status: 429, retryAfter: true, withBody: true}, // the delay besides the headers
				answerShape{status: 429, quota: quota, withBody: true}) // the delay in the body only
		}
		for _, want := range shapes {
			if seen[want] == 0 {
				t.Errorf("%s: no answer %+v read", style, want)
			}
		}
	}
	if n < 30_000 {
		t.Errorf("only %d answers compared", n)
	}
}
