// Package lazyctx holds Canceler, the cancellation of the Runner's attempt
// contexts: a context.WithCancel without its costs, read and tested apart
// from the Runner.
package lazyctx

import (
	"context"
	"sync"
	"sync/atomic"
)

// Canceler is the Done and Err of a context that is cancelled by Cancel. It
// replaces a context.WithCancel, which cost a tenth of a no-op attempt's
// CPU in the Runner's profile: the done channel is made only when Done is
// asked for, and nothing is registered with a parent. The zero value is a
// context not cancelled yet; a Canceler must not be copied once used.
type Canceler struct {
	mu   sync.Mutex
	done atomic.Pointer[chan struct{}]
	err  error // guarded by mu
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Done returns a channel closed when Cancel is called.
func (c *Canceler) Done() <-chan struct{} {
	if d := c.done.Load(); d != nil {
		return *d
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.done.Load(); d != nil {
		return *d
	}
	d := make(chan struct{})
	if c.err != nil {
		d = closedChan
	}
	c.done.Store(&d)
	return d
}

// Err returns context.Canceled once Cancel is called, else nil.
func (c *Canceler) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Cancel cancels the context; later calls do nothing.
func (c *Canceler) Cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = context.Canceled
	if d := c.done.Load(); d != nil {
		close(*d)
		return
	}
	d := closedChan
	c.done.Store(&d)
}
