// Package workers holds Pool, the goroutines that run a Runner's
// attempts: a queue of starts, the workers that take them, and the idle
// workers kept for the recent peak. It is kept apart from the Runner so
// that its rules are read and tested alone; the Runner's lock guards it.
package workers

import (
	"sync"
	"time"
)

// Pool runs starts of type S on worker goroutines with run, which runs a
// start and reports whether it wrote the next one to run into it. Its
// methods but Wait are called with the owner's lock held, the lock the
// pool was made with; run is called without it.
type Pool[S any] struct {
	mu     *sync.Mutex
	run    func(s *S) bool
	closed bool
	wg     sync.WaitGroup // worker goroutines
	// idle holds the workers waiting for a start, each on its channel,
	// the longest idle first; idleCap bounds them. running counts the
	// workers running starts, peak the most that ran at once in the
	// current window of the trim timer, which runs Trim while more than
	// maxIdle wait (trimArmed).
	idle      []chan struct{}
	maxIdle   int
	running   int
	peak      int
	trim      *time.Timer
	trimArmed bool
	// ready queues the starts waiting for a worker, oldest at readyHead;
	// waking says a worker is on its way to them (see Dispatch). Whenever
	// one waits, one is.
	ready     []S
	readyHead int
	waking    bool
}

// New returns a pool that keeps at least max(maxIdle, MinIdle) workers
// idle, guarded by mu.
func New[S any](mu *sync.Mutex, maxIdle int, run func(s *S) bool) *Pool[S] {
	p := &Pool[S]{mu: mu, run: run, maxIdle: max(maxIdle, MinIdle)}
	p.trim = time.AfterFunc(time.Hour, p.Trim)
	p.trim.Stop()
	return p
}

// Close takes no more starts, lets the idle workers go and returns the
// number of starts no worker took, which are dropped. Calling it more
// than once is safe.
func (p *Pool[S]) Close() (dropped int) {
	if p.closed {
		return 0
	}
	p.closed = true
	p.trim.Stop()
	for _, w := range p.idle {
		close(w)
	}
	p.idle = nil
	dropped = len(p.ready) - p.readyHead
	p.ready, p.readyHead = nil, 0
	return dropped
}

// Wait waits until every worker has returned; call it without the lock,
// after Close.
func (p *Pool[S]) Wait() { p.wg.Wait() }

// Idle returns the workers waiting idle and those running starts.
func (p *Pool[S]) Idle() (idle, running int) { return len(p.idle), p.running }

// worker runs attempts on one goroutine: it takes the oldest start waiting
// for a worker (see Dispatch), runs it, then the first of those the Core
// starts when it hears the outcome, and so on; when no start waits it
// waits, idle, until wake hands it the next, until Close or until Trim
// lets it go. It starts as the waking worker.
func (p *Pool[S]) worker() {
	defer p.wg.Done()
	growStack()
	next := make(chan struct{}, 1)
	p.mu.Lock()
	p.waking = false
	for {
		s, ok := p.take()
		if !ok {
			p.running--
			if p.closed || len(p.idle) >= p.idleCap() {
				p.mu.Unlock()
				return
			}
			p.idle = append(p.idle, next)
			if len(p.idle) > p.maxIdle && !p.trimArmed {
				p.trimArmed = true
				p.trim.Reset(idleWindow)
			}
			p.mu.Unlock()
			if _, ok := <-next; !ok {
				return // closed by Close or Trim
			}
			p.mu.Lock()
			p.waking = false
			continue
		}
		p.mu.Unlock()
		for p.run(&s) {
		}
		p.mu.Lock()
	}
}

// take removes the oldest start from the queue of those waiting for a
// worker; the caller holds the lock. When more wait, some worker must be on
// its way to them: take wakes one unless one is already waking.
func (p *Pool[S]) take() (S, bool) {
	var zero S
	if p.closed || p.readyHead == len(p.ready) {
		return zero, false
	}
	s := p.ready[p.readyHead]
	p.ready[p.readyHead] = zero
	p.readyHead++
	if p.readyHead == len(p.ready) {
		p.ready, p.readyHead = p.ready[:0], 0
	} else if !p.waking {
		p.waking = true
		p.wake()
	}
	return s, true
}

const (
	// MinIdle is the fewest idle workers a pool keeps.
	MinIdle = 16
	// MaxIdleWorkers bounds the idle workers a pool keeps for its recent
	// peak: each holds a stack of 8 KiB (see stackNeed), 8 MiB in all.
	MaxIdleWorkers = 1024
	// idleWindow is how often a pool with more than its usual idle
	// workers (maxIdle: the Runner's Config.MaxInFlight, MinIdle at
	// least) lets go of those its last window's peak did not need: a
	// worker left idle for two windows returns.
	idleWindow = 5 * time.Second
)

// idleCap is how many workers may wait idle: the usual number (maxIdle), or
// more, up to MaxIdleWorkers, when as many ran at once in the current
// window, so that the next turn as wide finds them waiting instead of
// starting a goroutine (its stack growth and channel) for each call. The
// caller holds the lock.
func (p *Pool[S]) idleCap() int {
	return max(p.maxIdle, min(p.peak, MaxIdleWorkers))
}

// Dispatch queues a start for a worker; the caller holds the lock. One
// worker at a time is woken for the queue (waking), and it wakes the next
// as it takes a start, as the workers that finish an attempt take starts
// too. So the attempts of a wide turn start at once when each blocks, and
// a few workers run them all when they end quickly, instead of a goroutine
// woken (or started) for each.
func (p *Pool[S]) Dispatch(s S) {
	p.ready = append(p.ready, s)
	if !p.waking {
		p.waking = true
		p.wake()
	}
}

// wake sets an idle worker, or a new one, on its way to the queue of starts;
// the caller holds the lock and has set waking.
func (p *Pool[S]) wake() {
	p.running++
	p.peak = max(p.peak, p.running)
	if n := len(p.idle); n > 0 {
		next := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		next <- struct{}{} // buffered, and empty while the worker is idle
		return
	}
	p.wg.Add(1)
	go p.worker()
}

// Trim is the trim timer's, every idleWindow while more than maxIdle
// workers wait: it lets go of the idle workers beyond what the window's
// peak needs (besides those running now), the longest idle first, and
// starts a new window.
func (p *Pool[S]) Trim() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trimArmed = false
	if p.closed {
		return
	}
	keep := max(p.maxIdle, min(p.peak, MaxIdleWorkers)-p.running)
	if extra := len(p.idle) - keep; extra > 0 {
		for _, w := range p.idle[:extra] {
			close(w)
		}
		n := copy(p.idle, p.idle[extra:])
		clear(p.idle[n:])
		p.idle = p.idle[:n]
	}
	p.peak = p.running
	if len(p.idle) > p.maxIdle {
		p.trimArmed = true
		p.trim.Reset(idleWindow)
	}
}

// stackNeed is about the stack an attempt's goroutine needs to report an
// outcome: the Core's decisions run on it, several frames deep.
const stackNeed = 4 << 10

// growStack grows a new goroutine's stack to stackNeed at once. A goroutine
// starts with a small stack and doubles it whenever a call overflows it,
// copying and re-pointing every frame; growing it here, two frames deep,
// costs a fraction of growing it inside the Core, which the Runner's
// profile showed as a quarter of a no-op attempt's CPU.
//
//go:noinline
func growStack() {
	var pad [stackNeed]byte
	touch(pad[:])
}

// touch reads b, so that the compiler keeps growStack's frame.
//
//go:noinline
func touch(b []byte) byte { return b[len(b)-1] }
