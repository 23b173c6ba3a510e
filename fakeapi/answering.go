package fakeapi

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// active counts the handlers running. A sync.WaitGroup does not fit: a
// connection that read its request just before Close may still enter its
// handler while Shutdown waits, an Add a WaitGroup forbids then. The zero
// value counts none. It is safe for concurrent use.
type active struct {
	mu sync.Mutex
	n  int
	// idle is closed when n drops to 0; nil while n is 0.
	idle chan struct{}
}

// enter counts one more handler running.
func (a *active) enter() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == 0 {
		a.idle = make(chan struct{})
	}
	a.n++
}

// leave counts one handler fewer; leaving more than entered is a bug.
func (a *active) leave() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == 0 {
		panic("fakeapi: a handler left that never entered")
	}
	a.n--
	if a.n == 0 {
		close(a.idle)
		a.idle = nil
	}
}

// running returns how many handlers run and a channel closed when none
// does (nil when none runs now).
func (a *active) running() (int, <-chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n, a.idle
}

// track wraps h so that Shutdown and Close can wait for its calls to end.
// The count is left in a defer, so a handler that panics to abort its
// connection (http.ErrAbortHandler) is counted out too.
func (s *Server) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.answering.enter()
		defer s.answering.leave()
		h.ServeHTTP(w, r)
	})
}

// awaitHandlers waits, at most ServerConfig.CloseWait, for the handlers
// still running after the listeners closed: net/http's Close does not wait
// for them, and a request ends in the model (Stats) only when its handler
// does. It returns ErrStillAnswering, with the count, when some still run.
func (s *Server) awaitHandlers() error {
	n, idle := s.answering.running()
	if n == 0 {
		return nil
	}
	wait := limit(s.cfg.CloseWait, DefaultCloseWait)
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-idle:
			return nil
		case <-t.C:
		}
	}
	n, _ = s.answering.running()
	if n == 0 {
		return nil
	}
	return fmt.Errorf("fakeapi: %d %w %v after their connections were closed; the accounting counts them in flight", n, ErrStillAnswering, wait)
}
