package fakeapi

import (
	"context"
	"iter"
	"net/http"
	"time"

	"github.com/simbench/simbench/fakeapi/internal/wire"
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
// working on it) or Finish, clientGone saying whether anyone read it; and
// in its record rec, when the server logs requests.
func (s *Server) end(sv *service, d *Decision, rec *Record, clientGone, cancel bool) {
	rec.ended(s.sinceStart(), clientGone, cancel)
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if cancel {
		sv.m.Cancel(s.now(), d.ID)
	} else {
		sv.m.Finish(s.now(), d.ID, clientGone)
	}
}

// stream sends an admitted request's response as server-sent events, the
// n groups that groups yields: the headers and first events after the time
// to first byte, the rest spread over the remaining latency. When the
// service paces generation (Decision.FirstToken), the first group goes at
// the time to first token and the rest evenly over the time the output
// tokens take, at the drawn tokens per second. A client that leaves before
// the last group, at any point, is treated as in await (see Stats): the
// service stops (cancelled) or, when it keeps working on a disconnect,
// generates the rest of the answer for nobody (wasted).
func (s *Server) stream(w http.ResponseWriter, ctx context.Context, sv *service, d *Decision, rec *Record, groups iter.Seq2[int, []byte], n int) {
	end := func(gone, cancel bool) { s.end(sv, d, rec, gone, cancel) }
	first, step := streamPace(sv.cfg.Generation.Enabled(), sv.cfg.Faults.SlowFirstByte.Delay, d, n)
	// leave ends the request whose client left before group i went out;
	// wait, if not nil, delivers when group i is due.
	leave := func(i int, wait <-chan time.Time) {
		if !sv.cfg.KeepWorkingOnDisconnect {
			end(true, true)
			return
		}
		rec.left(s.sinceStart())
		if wait != nil {
			<-wait
		}
		time.Sleep(s.real(step * time.Duration(n-1-i)))
		end(true, false)
	}
	rc := http.NewResponseController(w)
	t := time.NewTimer(s.real(first))
	defer t.Stop()
	for i, g := range groups {
		if i > 0 && step == 0 {
			// No time between groups: send on without a timer.
			if ctx.Err() != nil {
				leave(i, nil)
				return
			}
		} else {
			select {
			case <-t.C:
			case <-ctx.Done():
				leave(i, t.C)
				return
			}
		}
		if i == 0 {
			h := w.Header()
			h.Set("Content-Type", wire.StreamContentType(sv.cfg.API))
			h.Set("Cache-Control", "no-cache")
			w.WriteHeader(200)
		}
		if i == n-1 {
			rec.lastPart(s.sinceStart())
		}
		_, err := w.Write(g)
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			leave(i, nil)
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
func (s *Server) await(ctx context.Context, sv *service, d *Decision, rec *Record) bool {
	end := func(gone, cancel bool) { s.end(sv, d, rec, gone, cancel) }
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
			rec.left(s.sinceStart())
			<-t.C
			end(true, false)
			return false
		}
	}
	end(ctx.Err() != nil, false)
	return ctx.Err() == nil || d.Kind != KindOK
}
