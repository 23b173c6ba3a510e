package setup

import (
	"hash/fnv"
	"math/rand/v2"
)

// Stream returns a random stream derived from the scenario seed and a name
// such as "workload" or "service/openai". Each source draws from its own
// stream, so adding a service or a strategy never reshuffles the others.
func Stream(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}
