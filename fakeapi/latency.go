package fakeapi

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/spec"
)

// sampler draws from one distribution (spec.Sampler) with the stream
// the model gave it.
type sampler struct {
	s   *spec.Sampler
	rng *rand.Rand
}

func newSampler[T spec.Unit](d spec.Dist[T], rng *rand.Rand) sampler {
	return sampler{s: spec.NewSampler(d), rng: rng}
}

// draw returns one value in the distribution's unit (nanoseconds for a
// latency), never negative.
func (s *sampler) draw() float64 { return s.s.Draw(s.rng) }

// ReadSamples parses observed latencies, one per line: a Go duration
// ("120ms", "1.5s") or a bare number of milliseconds. Blank lines and lines
// starting with # are skipped. Errors name the line.
func ReadSamples(r io.Reader) ([]time.Duration, error) {
	var out []time.Duration
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		var d time.Duration
		if ms, err := strconv.ParseFloat(t, 64); err == nil && !math.IsNaN(ms) && math.Abs(ms) < 1e12 {
			d = time.Duration(ms * float64(time.Millisecond))
		} else if d, err = time.ParseDuration(t); err != nil {
			return nil, fmt.Errorf("line %d: %q is neither a duration nor milliseconds", line, t)
		}
		if d < 0 {
			return nil, fmt.Errorf("line %d: latency %v is negative", line, d)
		}
		out = append(out, d)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no latencies")
	}
	return out, nil
}
