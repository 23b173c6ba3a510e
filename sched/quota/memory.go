package quota

import (
	"context"
	"sync"
	"time"
)

// Memory is the in-process Backend: the buckets live in this process, with
// the same arithmetic as Redis and no I/O. Its zero value is not usable;
// call NewMemory. Safe for concurrent use.
type Memory struct {
	now func() time.Time
	mu  sync.Mutex
	b   map[string]*state
}

// NewMemory returns an empty Memory reading time from now (time.Now if nil).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, b: map[string]*state{}}
}

func (m *Memory) get(l Limit) *state {
	l.check()
	s := m.b[l.Name()]
	if s == nil {
		s = &state{}
		m.b[l.Name()] = s
	}
	return s
}

// Reserve implements Backend; it never returns an error.
func (m *Memory) Reserve(_ context.Context, l Limit, n float64, maxWait time.Duration) (Reservation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := micros(m.now())
	ok, wait, mark := m.get(l).reserve(l, now, n, waitMicros(maxWait))
	return Reservation{OK: ok, Wait: time.Duration(wait) * time.Microsecond, Mark: Mark{spent: mark}, Now: fromMicros(now)}, nil
}

// Settle implements Backend; it never returns an error.
func (m *Memory) Settle(_ context.Context, l Limit, reserved, actual float64, mk Mark) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.get(l).settle(l, micros(m.now()), reserved, actual, mk.spent)
	return nil
}

// Refund implements Backend; it never returns an error.
func (m *Memory) Refund(_ context.Context, l Limit, n float64, mk Mark) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.get(l).refund(l, n, mk.spent)
	return nil
}

// Available implements Backend; it never returns an error.
func (m *Memory) Available(_ context.Context, l Limit) (float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.get(l).available(l, micros(m.now())), nil
}
