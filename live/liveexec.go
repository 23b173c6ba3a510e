package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/sched"
)

// build makes the HTTP request for one attempt on the service's generic
// endpoint: reads are GETs of the tool's path, writes PUTs of their
// resource (so the service sees overlapping writes), model calls GETs of
// /llm; the tokens (a model call's input and output apart) and the client
// ride in headers.
func (l *liveRun) build(ctx context.Context, call *sched.Call, _ int) (*http.Request, error) {
	meta := call.Payload.(*agent.CallMeta)
	method, path := http.MethodGet, "/tools/"+call.Tool
	switch {
	case meta.Tool < 0:
		method, path = http.MethodGet, "/llm"
	case meta.Write:
		res := call.Resource
		if res == "" {
			res = call.Service
		}
		method, path = http.MethodPut, "/resources/"+res
	}
	svc := call.Service
	if a, ok := sched.AttemptOf(ctx); ok && a.Deployment != "" {
		svc = a.Deployment // the deployment a route chose
	}
	req, err := http.NewRequestWithContext(ctx, method, l.url(svc)+path, nil)
	if err != nil {
		return nil, err
	}
	if out := max(0, min(meta.Output, call.Tokens)); out > 0 {
		req.Header.Set(fakeapi.TokensHeader, strconv.FormatInt(call.Tokens-out, 10))
		req.Header.Set(fakeapi.OutputTokensHeader, strconv.FormatInt(out, 10))
	} else {
		req.Header.Set(fakeapi.TokensHeader, strconv.FormatInt(call.Tokens, 10))
	}
	req.Header.Set(fakeapi.ClientHeader, l.clientPrefix+meta.Client)
	if key := l.sc.Services[meta.Svc].ClientKey(); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return req, nil
}

// counted wraps process p's executor with the client-side accounting:
// attempts in flight per service and 429s seen.
func (l *liveRun) counted(p int, exec sched.Executor) sched.Executor {
	return func(ctx context.Context, call *sched.Call, n int) sched.Outcome {
		meta := call.Payload.(*agent.CallMeta)
		si := meta.Svc
		l.mu.Lock()
		start := l.vnow()
		l.m.Started(si, start, meta.Counted)
		l.mu.Unlock()
		o := exec(ctx, call, n)
		l.mu.Lock()
		end := l.vnow()
		l.m.Ended(si, end, o.Class == sched.ClassRateLimited)
		if meta.Counted {
			l.procs[p].attempts++
			l.countNoAnswer(o)
		}
		if o.Class == sched.ClassRateLimited {
			l.procs[p].limited++
		}
		l.mu.Unlock()
		if l.trace != nil {
			if err := l.trace.Attempt(call, n, start.Seconds(), end.Seconds(), o, time.Duration(float64(o.RetryAfter)/l.f)); err != nil {
				l.traceErr.CompareAndSwap(nil, &err)
				l.abort()
			}
		}
		return o
	}
}

// readerOnly makes cancellation stop only the reader: the request runs on
// without the attempt's context (until the run ends), its response read and
// thrown away, as a client that abandons a result but not its connection
// does.
func (l *liveRun) readerOnly(exec sched.Executor) sched.Executor {
	return func(ctx context.Context, call *sched.Call, n int) sched.Outcome {
		o := &orphan{done: make(chan sched.Outcome, 1)}
		l.readers.Add(1)
		go func() {
			defer l.readers.Done()
			defer l.recoverPanic()
			start := time.Now()
			out := exec(l.orphans, call, n)
			if o.deliver(out) {
				return
			}
			// Nobody reads this result: the server's work on it is wasted,
			// which the server itself cannot tell from a normal request.
			if out.Class == sched.ClassSuccess {
				l.mu.Lock()
				l.m.WastedS += time.Since(start).Seconds() / l.f
				l.m.WastedTokens += call.Tokens
				l.mu.Unlock()
			}
		}()
		select {
		case out := <-o.done:
			return out
		case <-ctx.Done():
			if out, ok := o.abandon(); ok {
				return out // it arrived as the reader gave up: read it after all
			}
			return sched.Outcome{Class: sched.ClassCancelled, Err: ctx.Err()}
		}
	}
}

// orphan settles, once, whether a reader-only request's result was read or
// abandoned.
type orphan struct {
	mu        sync.Mutex
	delivered bool
	abandoned bool
	done      chan sched.Outcome
}

// deliver hands the result to the reader, unless it gave up first.
func (o *orphan) deliver(out sched.Outcome) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.abandoned {
		return false
	}
	o.delivered = true
	o.done <- out
	return true
}

// abandon gives up on the result, unless it was delivered first.
func (o *orphan) abandon() (sched.Outcome, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.delivered {
		return <-o.done, true
	}
	o.abandoned = true
	return sched.Outcome{}, false
}

// recoverPanic, deferred at the top of each of the run's goroutines, keeps
// the first panic and ends the run.
func (l *liveRun) recoverPanic() {
	if r := recover(); r != nil {
		l.crashOnce.Do(func() { l.crash, l.crashStack = r, debug.Stack() })
		l.abort()
	}
}

// repanic raises the kept panic, if any, in the calling goroutine, with the
// stack of the goroutine where it happened.
func (l *liveRun) repanic() {
	if l.crash != nil {
		panic(fmt.Sprintf("%v\n\nin a live run's goroutine:\n%s", l.crash, l.crashStack))
	}
}

// countNoAnswer counts an attempt that got no HTTP answer from the provider
// (it could not connect, or what answered was not HTTP), keeping the first
// such error; an attempt cut off by its context is not one. l.mu is held.
func (l *liveRun) countNoAnswer(o sched.Outcome) {
	if o.Status != 0 || o.Err == nil || errors.Is(o.Err, context.Canceled) || errors.Is(o.Err, context.DeadlineExceeded) {
		return
	}
	if l.noAnswer == 0 {
		l.noAnswerErr = o.Err
	}
	l.noAnswer++
}
