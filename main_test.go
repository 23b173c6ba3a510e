package main

import (
	"testing"

	"go.uber.org/goleak"
)

// The commands start servers, simulations and progress bars: every goroutine
// they start must be gone when they return.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
