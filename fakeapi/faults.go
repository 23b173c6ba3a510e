package fakeapi

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// generation draws time to first token and output tokens per second, from
// a stream of its own.
type generation struct {
	ttft, tps       sampler
	hasTTFT, hasTPS bool
}

// newGeneration returns the pacing g describes, drawing from rng.
func newGeneration(g spec.Generation, rng *rand.Rand) *generation {
	gen := &generation{hasTTFT: g.TTFT.Kind != "", hasTPS: g.TokensPerSecond.Kind != ""}
	if gen.hasTTFT {
		gen.ttft = newSampler(g.TTFT, rng)
	}
	if gen.hasTPS {
		gen.tps = newSampler(g.TokensPerSecond, rng)
	}
	return gen
}

// pace returns the time to first token and the time n output tokens take,
// in nanoseconds.
func (g *generation) pace(n int64) (first, gen float64) {
	if g.hasTTFT {
		first = g.ttft.draw()
	}
	if g.hasTPS && n > 0 {
		tps := max(g.tps.draw(), spec.MinTokensPerSecond)
		gen = float64(n) * float64(time.Second) / tps
	}
	return first, gen
}

// serviceTime sets the Latency (and FirstToken, when generation is paced)
// of a request admitted at now with out output tokens: the drawn latency
// and generation time, scaled by the load past the knee and by a latency
// event, plus a slow first byte when one is drawn, plus the time of the
// stalls it overlaps.
func (m *Model) serviceTime(now time.Duration, out int64, d *Decision) {
	fc := &m.cfg.Faults
	lat := m.lat.draw()
	var first float64
	if m.gen != nil {
		ttft, gen := m.gen.pace(out)
		first = lat + ttft
		lat = first + gen
	}
	if f := m.cfg.Load.Factor; f > 0 {
		if over := m.inFlight - m.cfg.Load.Knee; over > 0 {
			lat *= 1 + f*float64(over)
			first *= 1 + f*float64(over)
		}
	}
	if e := m.events.active(now, func(e *spec.Event) bool { return e.LatencyFactor > 0 }); e != nil {
		lat *= e.LatencyFactor
		first *= e.LatencyFactor
	}
	if fc.SlowFirstByte.Rate > 0 && m.faults.Float64() < fc.SlowFirstByte.Rate {
		lat += float64(fc.SlowFirstByte.Delay)
		first += float64(fc.SlowFirstByte.Delay)
		d.SlowFirstByte = true
	}
	d.Latency = time.Duration(min(lat, math.MaxInt64/2))
	if m.gen != nil {
		d.FirstToken = min(time.Duration(min(first, math.MaxInt64/2)), d.Latency)
	}
	if len(m.events.stalls) > 0 {
		d.Latency = m.events.finishAt(now, d.Latency) - now
		if m.gen != nil {
			d.FirstToken = m.events.finishAt(now, d.FirstToken) - now
		}
	}
}

// errorRate is the server-error rate in force at now: an event's covering
// now, else FaultConfig.ErrorRate.
func (m *Model) errorRate(now time.Duration) float64 {
	if e := m.events.active(now, func(e *spec.Event) bool { return e.ErrorRate != nil }); e != nil {
		return *e.ErrorRate
	}
	return m.cfg.Faults.ErrorRate
}

// outcome sets d's Kind and Status for an admission: a fault drawn by the
// configured rates, with errorRate for server errors (hang, reset), else
// OK.
func (m *Model) outcome(errorRate float64, d *Decision) {
	fc := &m.cfg.Faults
	d.Kind, d.Status = KindOK, 200
	if errorRate+fc.HangRate+fc.ResetRate > 0 {
		switch u := m.faults.Float64(); {
		case u < errorRate:
			d.Kind, d.Status = KindServerError, fc.ErrorStatus
		case u < errorRate+fc.HangRate:
			d.Kind, d.Status, d.Latency, d.FirstToken = KindHang, 0, 0, 0
			m.c.errors[KindHang]++
		case u < errorRate+fc.HangRate+fc.ResetRate:
			d.Kind, d.Status = KindReset, 0
		}
	}
}

// shed reports whether an arrival at now is refused as overloaded, by an
// overload episode (FaultConfig.Overload) or an event's overload rate, and
// sets d.Wait to when the overload ends.
func (m *Model) shed(now time.Duration, d *Decision) bool {
	if m.overloaded(now) {
		d.Wait = m.epEnd - now
		return true
	}
	if e := m.events.active(now, func(e *spec.Event) bool { return e.OverloadRate != nil }); e != nil {
		if r := *e.OverloadRate; r >= 1 || (r > 0 && m.evRand.Float64() < r) {
			d.Wait = e.End() - now
			return true
		}
	}
	return false
}

// maxEpisodeSteps bounds the overload episodes overloaded steps through one
// at a time on one arrival; past it, it jumps to the phase at the arrival.
const maxEpisodeSteps = 64

// overloaded reports whether an arrival at now falls into an overload
// episode and is rejected by it.
//
// Episodes alternate with exponential gaps of mean Every. Between arrivals
// close together the model steps through them one by one, as drawn. When an
// arrival comes more than maxEpisodeSteps episodes after the last one (a
// tiny Every, or a long quiet spell), stepping could take as many iterations
// as nanoseconds; instead the model draws the phase at now from the
// process's long-run distribution, which is what the steps converge to:
// now falls inside an episode with probability Length ÷ (Every + Length),
// with a uniform part of it left; otherwise the gap left is exponential with
// mean Every, since exponential gaps are memoryless. Either way the work per
// arrival is bounded.
func (m *Model) overloaded(now time.Duration) bool {
	o := &m.cfg.Faults.Overload
	if o.Every == 0 {
		return false
	}
	gap := func() time.Duration { return satmath.Scale(o.Every, m.overload.ExpFloat64()) }
	if !m.epInit {
		m.epInit = true
		m.epStart = gap()
		m.epEnd = satmath.Add(m.epStart, o.Length)
	}
	for steps := 0; now >= m.epEnd; steps++ {
		if steps == maxEpisodeSteps {
			m.jumpEpisode(now)
			break
		}
		m.epStart = satmath.Add(m.epEnd, gap())
		m.epEnd = satmath.Add(m.epStart, o.Length)
	}
	if now < m.epStart {
		return false
	}
	return o.Rate >= 1 || m.overload.Float64() < o.Rate
}

// jumpEpisode sets the episode at or after now by drawing the phase of the
// episode process at now from its long-run distribution (see overloaded).
func (m *Model) jumpEpisode(now time.Duration) {
	o := &m.cfg.Faults.Overload
	every, length := float64(o.Every), float64(o.Length)
	// The time left in the phase is a real number above 0; the phase ends at
	// the first whole nanosecond at or after it.
	left := func(x float64) time.Duration { return satmath.FromFloat[time.Duration](math.Ceil(x)) }
	if m.overload.Float64()*(every+length) < length {
		m.epEnd = satmath.Add(now, max(left(length*m.overload.Float64()), 1))
		m.epStart = satmath.Sub(m.epEnd, o.Length)
		return
	}
	m.epStart = satmath.Add(now, max(left(every*m.overload.ExpFloat64()), 1))
	m.epEnd = satmath.Add(m.epStart, o.Length)
}
