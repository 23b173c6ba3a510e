package httptool_test

import (
	"testing"

	"go.uber.org/goleak"
)

// httpmock runs responders in goroutines and one test starts a loopback
// server; none may outlive the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
