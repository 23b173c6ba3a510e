package fakeapi

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// Answering an admitted request in real time: waiting out its latency,
// streaming, and ending it in the model.

// hold waits d of real time before a rejection is answered (a stall holds
// every answer until it ends); shutting down answers at once. It returns
// false when the client went away first.
func (s *Server) hold(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.quit:
	case <-ctx.Done():
		return false
	}
	return true
}

// end ends an admitted request in the model: Cancel (the service stopped
// working on it) or Finish, clientGone saying whether anyone read it.
func (s *Server) end(sv *service, d *Decision, clientGone, cancel bool) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if cancel {
		sv.m.Cancel(s.now(), d.ID)
	} else {
		sv.m.Finish(s.now(), d.ID, clientGone)
	}
}

// stream sends an admitted request's response as server-sent events: the
// headers and first events after the time to first byte, the rest spread
// over the remaining latency. When the service paces generation
// (Decision.FirstToken), the first group goes at the time to first token
// and the rest evenly over the time the output tokens take, at the drawn
// tokens per second. A client gone before the first byte is handled as in
// await; one gone mid-stream finishes the request with its tokens counted
// as wasted.
func (s *Server) stream(w http.ResponseWriter, ctx context.Context, sv *service, d *Decision, groups iter.Seq2[int, []byte], n int) {
	end := func(gone, cancel bool) { s.end(sv, d, gone, cancel) }
	first, step := streamPace(sv.cfg.Generation.Enabled(), sv.cfg.Faults.SlowFirstByte.Delay, d, n)
	rc := http.NewResponseController(w)
	t := time.NewTimer(s.real(first))
	defer t.Stop()
	for i, g := range groups {
		if i > 0 && step == 0 {
			// No time between groups: send on without a timer.
			if ctx.Err() != nil {
				end(true, false)
				return
			}
		} else {
			select {
			case <-t.C:
			case <-ctx.Done():
				if i > 0 {
					end(true, false)
					return
				}
				if !sv.cfg.KeepWorkingOnDisconnect {
					end(true, true)
					return
				}
				// The service keeps generating the whole answer.
				<-t.C
				time.Sleep(s.real(step * time.Duration(n-1)))
				end(true, false)
				return
			}
		}
		if i == 0 {
			h := w.Header()
			h.Set("Content-Type", "text/event-stream; charset=utf-8")
			h.Set("Cache-Control", "no-cache")
			w.WriteHeader(200)
		}
		_, err := w.Write(g)
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			end(true, false)
			return
		}
		if step > 0 {
			t.Reset(s.real(step))
		}
	}
	end(ctx.Err() != nil, false)
}

// streamPace returns when the first of n groups of a streamed answer goes,
// and the time between the groups after it, in the models' time: with
// paced generation, the first at Decision.FirstToken and the rest spread
// over the generation time; otherwise after the slow first byte (if any)
// and one n-th of the rest of the latency, the rest spread the same way.
func streamPace(paced bool, slowFirstByte time.Duration, d *Decision, n int) (first, step time.Duration) {
	if paced {
		if n > 1 {
			step = (d.Latency - d.FirstToken) / time.Duration(n-1)
		}
		return d.FirstToken, step
	}
	base := d.Latency
	if d.SlowFirstByte {
		slow := min(slowFirstByte, base)
		base, first = base-slow, slow
	}
	step = base / time.Duration(n)
	return first + step, step
}

// await waits out an admitted request's latency and ends it in the model.
// It returns false when there is no response to write: the client went away
// (Cancel, or Finish with clientGone when the service keeps working), or a
// hanging request was aborted by shutdown.
func (s *Server) await(ctx context.Context, sv *service, d *Decision) bool {
	end := func(gone, cancel bool) { s.end(sv, d, gone, cancel) }
	if d.Kind == KindHang {
		select {
		case <-ctx.Done():
			end(true, true)
			return false
		case <-s.quit:
			end(true, true)
			panic(http.ErrAbortHandler)
		}
	}
	if d.Latency > 0 {
		t := time.NewTimer(s.real(d.Latency))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			if !sv.cfg.KeepWorkingOnDisconnect {
				end(true, true)
				return false
			}
			<-t.C
			end(true, false)
			return false
		}
	}
	end(ctx.Err() != nil, false)
	return ctx.Err() == nil || d.Kind != KindOK
}
