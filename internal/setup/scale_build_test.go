package setup

import (
	"testing"

	"github.com/simbench/simbench/scenarios"
)

// TestScaledServicesBuild: a live run scales a scenario's durations and
// rates by its time scale (Scale), and the scaled services must still pass
// the validator the fake services are built by. Scale keeps each request
// bucket's size by setting Burst, on every limiter; only a token bucket's
// may reach the fake service. At 0.5 every built-in's rates stay within
// the service's arithmetic.
func TestScaledServicesBuild(t *testing.T) {
	for _, info := range scenarios.List() {
		sc, err := scenarios.Builtin(info.Name)
		if err != nil {
			t.Fatal(err)
		}
		s := Scale(sc, 0.5)
		for i := range s.Services {
			if ps := s.Services[i].Model().Problems(); len(ps) > 0 {
				t.Errorf("%s, service %s scaled by 0.5: %v", info.Name, s.Services[i].Name, ps)
			}
		}
	}
}
