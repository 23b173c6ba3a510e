package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/simbench/simbench/internal/proc"
)

// ErrCommand is returned (wrapped) by RunCommand when the command could
// not start or did not exit 0.
var ErrCommand = errors.New("check: the client command failed")

// CommandGrace is how long a client command's processes have to exit after
// they are sent SIGTERM (the check's duration passed, Ctrl-C, or the
// command's first process exited while others of its group still run)
// before they are killed.
const CommandGrace = 5 * time.Second

// groupPoll is how often RunCommand looks whether a signalled process
// group is gone.
const groupPoll = 20 * time.Millisecond

// RunCommand runs argv with the caller's environment plus env, its output
// to stdout and stderr, in a process group of its own, until its first
// process exits or ctx is done. Then every process of the group still
// running (the children a shell, npm, make or uv started) is sent SIGTERM,
// and SIGKILL CommandGrace later, so that none keeps calling the services
// after check has graded. (A process that leaves the group, calling setsid
// or setpgid, is not followed; its output is no longer read CommandGrace
// after the group ended.) It returns nil when the command exited 0 or was
// stopped by ctx, else an error wrapping ErrCommand.
func RunCommand(ctx context.Context, argv, env []string, stdout, stderr io.Writer) error {
	if len(argv) == 0 {
		return fmt.Errorf("%w: no command given", ErrCommand)
	}
	if ctx.Err() != nil {
		return nil // stopped as asked before it started
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out outputs
	var err error
	if cmd.Stdout, err = out.to(stdout); err == nil {
		cmd.Stderr, err = out.to(stderr)
	}
	if err == nil {
		err = cmd.Start()
	}
	out.started()
	if err != nil {
		out.wait(CommandGrace)
		return fmt.Errorf("%w: %v", ErrCommand, err)
	}
	pgid := cmd.Process.Pid // Setpgid: the group is named after its first process
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-ctx.Done():
		endGroup(pgid)
		err = <-exited
	}
	endGroup(pgid) // the processes the first one left behind
	out.wait(CommandGrace)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return nil // stopped as asked
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("%w: %s %s", ErrCommand, argv[0], ee.ProcessState)
	}
	return fmt.Errorf("%w: %v", ErrCommand, err)
}

// endGroup sends SIGTERM to process group pgid, waits until none of its
// processes runs (groupGone), and past CommandGrace sends it SIGKILL.
func endGroup(pgid int) {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return // no process left in the group
	}
	tick := time.NewTicker(groupPoll)
	defer tick.Stop()
	grace := time.NewTimer(CommandGrace)
	defer grace.Stop()
	for {
		select {
		case <-tick.C:
			if groupGone(pgid) {
				return
			}
		case <-grace.C:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return
		}
	}
}

// groupGone reports whether no process of group pgid runs any more: none
// is left, or (where /proc lists them) those left are zombies, exited and
// waiting for a parent to collect them.
func groupGone(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return true
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false // no /proc: a zombie counts as running
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		state, group, ok := proc.Stat(pid)
		if ok && group == pgid && state != 'Z' {
			return false
		}
	}
	return true
}

// outputs carries a command's standard output and error to writers that
// are not files, through pipes RunCommand owns: so that it can stop
// reading when a process it cannot end still holds them. The copies share
// one lock, the two writers being often the same.
type outputs struct {
	mu      sync.Mutex
	copies  sync.WaitGroup
	readers []*os.File
	writers []*os.File
}

// to returns what the command should write to for w: w itself when it is
// a file or nil, else a pipe copied to w.
func (o *outputs) to(w io.Writer) (io.Writer, error) {
	if w == nil {
		return nil, nil
	}
	if f, ok := w.(*os.File); ok {
		return f, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	o.readers, o.writers = append(o.readers, pr), append(o.writers, pw)
	o.copies.Add(1)
	go func() {
		defer o.copies.Done()
		_, _ = io.Copy(lockedWriter{&o.mu, w}, pr)
	}()
	return pw, nil
}

// started closes this process's ends of the pipes' write sides once the
// command holds its own.
func (o *outputs) started() {
	for _, w := range o.writers {
		w.Close()
	}
}

// wait waits for the copies to end (every process holding a pipe has
// exited), for at most d; then it stops reading.
func (o *outputs) wait(d time.Duration) {
	done := make(chan struct{})
	go func() { o.copies.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	for _, r := range o.readers {
		r.Close()
	}
	<-done
}

// lockedWriter writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

// Write writes p to the writer under the lock.
func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
