package sched

// outChunks hands out the storage of what the driver is handed when a turn
// is done (its TurnResult and Results) cut from chunks made a few turns'
// worth at a time: one allocation serves many turns, where one per turn was
// a tenth of a one-call turn's time. Each piece is handed out once, zeroed,
// and is the driver's from then on; a chunk is freed when the driver holds
// none of its pieces, so a driver that keeps one turn's results keeps its
// chunk, at most ones × 176 bytes or results × 104 bytes, alive with them.
//
// A driver may give a done turn's storage back (Core.Recycle); it is then
// handed to a later turn of as many calls before any chunk is cut.
type outChunks struct {
	ones    []turnOut // the rest of the current chunk of one-call turns' storage
	results []Result
	turns   []TurnResult
	// spare holds the TurnResults given back, by their number of Results
	// (at most maxRecycledCalls), each with its Results cleared.
	spare [maxRecycledCalls + 1][]*TurnResult
}

// maxRecycledCalls is the most Results of a TurnResult that Recycle keeps;
// maxRecycled bounds the TurnResults it keeps of each size.
const (
	maxRecycledCalls = resultChunk / 4
	maxRecycled      = 256
)

// reuse returns the latest TurnResult of n Results given back, zeroed and
// its Results cleared, or nil when there is none.
func (o *outChunks) reuse(n int) *TurnResult {
	if n <= 0 || n > maxRecycledCalls || len(o.spare[n]) == 0 {
		return nil
	}
	l := o.spare[n]
	r := l[len(l)-1]
	l[len(l)-1] = nil
	o.spare[n] = l[:len(l)-1]
	return r
}

// recycle keeps r, which a driver gave back, for reuse, when it is of a
// size kept and there is room.
func (o *outChunks) recycle(r *TurnResult) {
	n := len(r.Results)
	if r.Turn == 0 || n == 0 || n > maxRecycledCalls || cap(r.Results) != n || len(o.spare[n]) >= maxRecycled {
		return
	}
	results := r.Results
	clear(results)
	*r = TurnResult{Results: results}
	o.spare[n] = append(o.spare[n], r)
}

// The sizes of the chunks, in pieces.
const (
	oneChunk    = 16
	resultChunk = 64
	turnChunk   = 16
)

// one returns a one-call turn's storage.
func (o *outChunks) one() *turnOut { return cut(&o.ones, oneChunk) }

// resultsFor returns the Results of a turn of n calls; a turn of more than
// a quarter of a chunk has its own.
func (o *outChunks) resultsFor(n int) []Result {
	if n > resultChunk/4 {
		return make([]Result, n)
	}
	if len(o.results) < n {
		o.results = make([]Result, resultChunk)
	}
	r := o.results[:n:n]
	o.results = o.results[n:]
	return r
}

// turnResult returns a TurnResult for a turn of several calls (or none).
func (o *outChunks) turnResult() *TurnResult { return cut(&o.turns, turnChunk) }

// cut hands out the first piece of *rest, a new chunk of size pieces when
// *rest is used up, and leaves the others in *rest.
func cut[T any](rest *[]T, size int) *T {
	if len(*rest) == 0 {
		*rest = make([]T, size)
	}
	x := &(*rest)[0]
	*rest = (*rest)[1:]
	return x
}
