package sched

// Stats returns the Runner's state now: attempts in flight, calls waiting,
// and per service its queue, its concurrency limit in force, its limits and
// what its buckets hold. It waits for the lock the Core is driven under, so
// it sees the state between two decisions, never in the middle of one.
func (r *Runner) Stats() Stats {
	r.mu.Lock()
	st := r.core.Stats(r.now())
	r.handOff()
	return st
}

// SetLimits replaces a service's limits while turns run; the new limits
// hold from now, calls booked for a later start booked again under them
// (see Core.SetLimits). It returns an error
// for a service Config.Services does not list, a negative, NaN or infinite
// limit or a rate below MinRatePerMinute, and ErrClosed after Close.
func (r *Runner) SetLimits(service string, l Limits) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrClosed
	}
	err := r.core.SetLimits(r.now(), service, l)
	r.handOff()
	return err
}
