package pipeline

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// TestErrorsCarryTheirKind checks the kinds the commands' exit codes come
// from: an HDR folder that cannot be made is invalid input, found before
// anything is simulated; a decision stopped before it measured a cap is
// an interrupt.
func TestErrorsCarryTheirKind(t *testing.T) {
	sc, err := scenarios.Builtin("burst-8")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = Run(t.Context(), sc, RunOptions{Sim: sim.Options{Duration: time.Second, MaxMemory: sim.DefaultMaxMemory}, HDR: filepath.Join(file, "hdr"),
		Dir: t.TempDir(), Out: io.Discard, Stderr: io.Discard})
	if pe := new(Error); !errors.As(err, &pe) || pe.Kind != Invalid {
		t.Errorf("an HDR folder under a file: %v, want an Invalid error", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = Recommend(ctx, sc, RecommendOptions{Decision: decision.Options{Rule: decision.Rule{MaxShare: decision.DefaultMaxRateLimitedShare}, Seeds: 1, Duration: time.Minute}, Out: io.Discard})
	if pe := new(Error); !errors.As(err, &pe) || pe.Kind != Interrupted {
		t.Errorf("a cancelled recommendation: %v, want an Interrupted error", err)
	}
}
