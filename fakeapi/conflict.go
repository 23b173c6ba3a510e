package fakeapi

// Write conflicts, as a service with optimistic concurrency control answers
// them.
//
// A write holds its resource from its arrival until Finish or Cancel. A
// write that arrives while another write holds the same resource overlaps
// it; without conflict detection both go through (a write race, a lost
// update in a real system). With spec.Faults.Conflict above 0 the
// service detects the overlap, with that probability, and the later
// arrival loses: it is admitted, does its work for its drawn latency and
// is then refused with 409 Conflict, as a compare-and-swap on a version
// (an If-Match precondition, an ETag) refuses the commit of a writer that
// read a version another writer already holds. The first arrival keeps
// the resource and commits as usual. A losing write never holds the
// resource, so it blocks nobody: the next write to arrive after the holder
// ends wins. Reads never conflict, and writes to different resources never
// conflict with each other.
//
// The decision is made at arrival, when both writes are known to be in
// service at once, so a driver learns it with the rest of the Decision;
// the client only sees it when the response comes, after Latency.

// resource returns the resource a write modifies: Resource, else Path.
func (r *Request) resource() string {
	if r.Resource != "" {
		return r.Resource
	}
	return r.Path
}

// conflicts reports whether a write to res arriving now loses to a write
// already holding res: there is one, and the draw against Faults.Conflict
// says the service detects the overlap. It draws only for a rate strictly
// between 0 and 1, so a rate of 1 consumes no randomness.
func (m *Model) conflicts(res string) bool {
	rate := m.cfg.Faults.Conflict
	if rate <= 0 || m.writes[res] == 0 {
		return false
	}
	return rate >= 1 || m.conflict.Float64() < rate
}
