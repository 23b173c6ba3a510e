// Helpers every command shares: exit codes, loading a scenario, the
// terminal, Ctrl-C.

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"golang.org/x/term"

	"github.com/simbench/simbench/internal/bytesize"
	"github.com/simbench/simbench/scenarios"
)

// Exit codes shared by every command (exitCodesHelp in main.go and the
// docs/commands.md say the same).
const (
	exitFailure     = 1   // something went wrong, a regression, a threshold not met
	exitInvalid     = 2   // invalid input: a bad scenario file, flag or results file
	exitInvalidRun  = 3   // a live run the machine could not keep the timing of
	exitNotMeasured = 4   // check: no line failed, but some had nothing to measure
	exitBug         = 70  // a panic: a bug in simbench (EX_SOFTWARE of sysexits.h)
	exitInterrupted = 130 // Ctrl-C: what was measured has been written
)

// codedError carries an exit code for main.
type codedError struct {
	err  error
	code int
}

func (e codedError) Error() string { return e.err.Error() }
func (e codedError) Unwrap() error { return e.err }
func (e codedError) ExitCode() int { return e.code }

// openScenario loads a scenario file or a built-in name; a scenario that
// does not load (missing, or every problem of a bad file) is invalid input.
// A name close to a built-in one gets a suggestion.
func openScenario(arg string) (*scenarios.Scenario, error) {
	sc, err := scenarios.Open(arg)
	if err != nil {
		return nil, codedError{scenarios.Suggest(arg, err), exitInvalid}
	}
	return sc, nil
}

// console returns where a command prints (w, or standard output when w is
// nil) and whether that is a terminal, which decides progress bars and
// colour; isTerminal, when set (tests), overrides the answer.
func console(w io.Writer, isTerminal func() bool) (io.Writer, bool) {
	tty := false
	if w == nil {
		w = os.Stdout
		tty = term.IsTerminal(int(os.Stdout.Fd()))
	}
	if isTerminal != nil {
		tty = isTerminal()
	}
	return w, tty
}

// colour says whether terminal output gets ANSI colour: only on a
// terminal, and never when NO_COLOR is set (no-color.org).
func colour(tty bool) bool { return tty && os.Getenv("NO_COLOR") == "" }

// interruptible returns a context that the first Ctrl-C (SIGINT) or
// SIGTERM cancels, derived from parent (nil: a background context; tests
// pass one they cancel), and the func that releases it. The command then
// writes what was measured; a second signal, before the release, exits
// the process at once with exitInterrupted and writes nothing more, so
// that a run stuck after the first (a hung write, a run that will not
// settle) can still be stopped. Both signals are announced on standard
// error.
func interruptible(parent context.Context) (context.Context, context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	// Room for both signals: one not yet read when the next comes is
	// not dropped.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	handlers.Add(1) // after Notify: no signal falls between the two catches
	released := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case s := <-sig:
			fmt.Fprintf(os.Stderr, "\nsimbench: %s: stopping; a second Ctrl-C or SIGTERM exits at once\n", signalName(s))
			cancel()
		case <-released:
			return
		}
		select {
		case s := <-sig:
			fmt.Fprintf(os.Stderr, "simbench: %s again: exiting at once (exit %d), without writing what was measured\n", signalName(s), exitInterrupted)
			os.Exit(exitInterrupted)
		case <-released:
		}
	})
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			handlers.Add(-1) // before Stop, as Add(1) after Notify
			signal.Stop(sig)
			close(released)
			wg.Wait()
		})
		cancel()
	}
}

// interruptibleOnce returns a context that Ctrl-C (or SIGTERM) cancels,
// derived from parent as interruptible's, where a second signal must not
// exit: serve's and check's drain give it a meaning of their own (close
// the connections still open, which ends the drain at once), and a fleet
// member a run started may get two for one interrupt (worker).
func interruptibleOnce(parent context.Context) (context.Context, context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	handlers.Add(1) // after NotifyContext, as in interruptible
	var once sync.Once
	return ctx, func() {
		once.Do(func() { handlers.Add(-1) })
		stop()
	}
}

// handlers counts the signal handlers that commands hold now
// (interruptible, interruptibleOnce): while one does, catchSignalsEarly
// leaves SIGINT and SIGTERM to it.
var handlers atomic.Int32

// catchSignalsEarly catches SIGINT and SIGTERM from the start of the
// process (main calls it first, before parsing flags or loading a
// scenario), so that no signal takes the default action of killing
// simbench without a word: one that comes while no command handles
// signals (before a command installs its handler, or in a command that has
// none, such as report or gate) exits at once with exitInterrupted and
// says so; nothing has been measured yet, or the command has nothing to
// save. It returns at once; the goroutine it starts lives as long as the
// process.
func catchSignalsEarly() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		for s := range sig {
			if handlers.Load() > 0 {
				continue // the command's handler has it too
			}
			fmt.Fprintf(os.Stderr, "\nsimbench: %s: exiting at once (exit %d)\n", signalName(s), exitInterrupted)
			os.Exit(exitInterrupted)
		}
	}()
}

// signalName names s as a user sent it: Ctrl-C or SIGTERM.
func signalName(s os.Signal) string {
	if s == os.Interrupt {
		return "Ctrl-C"
	}
	return "SIGTERM"
}

// positiveDuration is a duration flag that must be above zero when given:
// --duration 0s is refused as invalid input rather than read as "not set".
type positiveDuration time.Duration

// Decode reads the flag's value (a Go duration such as 90s or 10m) and
// refuses zero and negative durations.
func (p *positiveDuration) Decode(ctx *kong.DecodeContext) error {
	var s string
	if err := ctx.Scan.PopValueInto("duration", &s); err != nil {
		return err
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration (write it as 90s, 10m or 1h30m)", s)
	}
	if d <= 0 {
		return fmt.Errorf("%s: want a duration above 0", s)
	}
	*p = positiveDuration(d)
	return nil
}

// D returns the flag as a time.Duration (0: not given).
func (p positiveDuration) D() time.Duration { return time.Duration(p) }

// seedCount is a --seeds flag: how many seeds to run, at least 1 when
// given. --seeds 0 is refused as invalid input by every command rather
// than read as "not set" by one and refused by another.
type seedCount int

// Decode reads the flag's value, a whole number of seeds, and refuses
// zero and negative counts.
func (n *seedCount) Decode(ctx *kong.DecodeContext) error {
	var s string
	if err := ctx.Scan.PopValueInto("seeds", &s); err != nil {
		return err
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not a whole number of seeds", s)
	}
	if v < 1 {
		return fmt.Errorf("%d: want at least 1 seed (each seed is one simulated run of every configuration)", v)
	}
	*n = seedCount(v)
	return nil
}

// byteSize is a memory budget flag: a whole number of bytes with an
// optional unit, KiB, MiB, GiB (powers of 1,024) or KB, MB, GB (of 1,000).
type byteSize int64

// Decode reads a size such as 512MiB or 4GiB and refuses zero and negative
// sizes.
func (b *byteSize) Decode(ctx *kong.DecodeContext) error {
	var s string
	if err := ctx.Scan.PopValueInto("size", &s); err != nil {
		return err
	}
	n, err := bytesize.Parse(s)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}
