// Package proc runs the child processes of the sandbox, the e2e stack and the benchmark: OCM's controllers,
// the manager, kube-scheduler, kwok, the build scripts. It keeps, in one place, the strongest of what the three
// copies it replaces did:
//
//   - a child leads a process group of its own (from the sandbox), so a terminal's Ctrl-C reaches the parent
//     first, which then stops the children in its own order, and stopping a child stops its children too
//     (a build script's go build);
//   - Stop sends SIGTERM to the group, gives the leader a grace period (DefaultGrace), then sends SIGKILL to
//     the whole group, whatever is left of it, and waits until the leader is reaped (the e2e stack and the
//     benchmark killed the leader alone, the sandbox's exec.CommandContext did the same after its grace);
//   - a child lives until Stop, not until some context ends (from the sandbox), so the caller decides the
//     order in which things stop;
//   - on Linux the kernel kills a child whose parent dies (from the benchmark; strictly, when the OS thread
//     that started it exits, which Go's runtime does not do to a thread that is not locked);
//   - a Watchdog (from the e2e stack and the benchmark) kills what is left, process groups included, when the
//     parent dies without stopping its children, even by SIGKILL or a `go test -timeout` panic;
//   - an exit is reported with the end of the child's log (from the e2e stack and the benchmark), and Tail
//     shows the end of a log before it is removed (from the sandbox);
//   - the output is appended to the log, so a restarted child keeps its predecessor's lines (from the
//     sandbox).
//
// Pid gives a child's process id for measuring it through /proc (the benchmark) and for checking that it is
// gone (the sandbox). Process groups, the watchdog and the parent-death signal are Unix or Linux only;
// elsewhere Stop kills the child alone.
package proc

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultGrace is how long a child gets to exit after SIGTERM before its process group is killed.
const DefaultGrace = 10 * time.Second

// TailLines is how many lines of its log an exit error shows.
const TailLines = 30

// The signals Stop sends: SIGTERM first, SIGKILL after the grace period (only the latter outside Unix).
const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// Spec describes a child to start.
type Spec struct {
	// Name names the child in errors: "the placement controller", "hub-manager".
	Name string
	// Path is the binary or script; Args are its arguments.
	Path string
	Args []string
	// Env is added to this process's environment (TMPDIR for OCM's binaries, KUBECONFIG, ...).
	Env []string
	// Log is the file the child's output is appended to, created if missing. Without it the output goes to
	// Stdout and Stderr, which are discarded when nil.
	Log            string
	Stdout, Stderr io.Writer
	// Grace is how long Stop waits after SIGTERM before SIGKILL; DefaultGrace when zero.
	Grace time.Duration
	// Watchdog, when set, learns the child's process id, to kill its group if this process dies first.
	Watchdog *Watchdog
}

// Process is a running child.
type Process struct {
	name, log string
	grace     time.Duration
	cmd       *exec.Cmd
	// done is closed once the child has exited and been reaped; err is what Wait returned then.
	done chan struct{}
	err  error

	stopOnce sync.Once
	stopErr  error
}

// Start starts a child as spec says.
func Start(spec Spec) (*Process, error) {
	grace := spec.Grace
	if grace == 0 {
		grace = DefaultGrace
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	if len(spec.Env) > 0 {
		cmd.Env = append(os.Environ(), spec.Env...)
	}
	cmd.SysProcAttr = sysProcAttr()
	// Output pipes (Stdout a buffer) that a grandchild keeps open must not hold Wait forever.
	cmd.WaitDelay = grace
	if spec.Log != "" {
		log, err := os.OpenFile(spec.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("creating the log of %s: %w", spec.Name, err)
		}
		// The child has its own copy of the descriptor once started.
		defer log.Close()
		cmd.Stdout, cmd.Stderr = log, log
	} else {
		cmd.Stdout, cmd.Stderr = spec.Stdout, spec.Stderr
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.Name, err)
	}
	p := &Process{name: spec.Name, log: spec.Log, grace: grace, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	spec.Watchdog.Watch(cmd.Process.Pid)
	return p, nil
}

// Name is the child's name from its Spec.
func (p *Process) Name() string { return p.name }

// Pid is the child's process id, which is also its process group's on Unix.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// LogPath is the file its output goes to, empty when it has none.
func (p *Process) LogPath() string { return p.log }

// Done is closed when the child has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is what waiting for the child returned (nil for exit status 0); only meaningful once Done is closed.
func (p *Process) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// ExitError is nil while the child runs; once it has exited, an error saying how, with the end of its log.
func (p *Process) ExitError() error {
	select {
	case <-p.done:
	default:
		return nil
	}
	if p.log == "" {
		return fmt.Errorf("%s exited (%v)", p.name, p.err)
	}
	return fmt.Errorf("%s exited (%v); the end of %s:\n%s", p.name, p.err, p.log, Tail(p.log, TailLines))
}

// Stop sends SIGTERM to the child's process group, waits up to the grace period for the child to exit, sends
// SIGKILL to whatever is left of the group (members that ignored SIGTERM or outlived the leader), and waits
// until the child is reaped. It is safe to call more than once and from several goroutines, and after the
// child has exited by itself. Its error is about signalling only: a child that exits on SIGTERM with a
// non-zero status is stopped fine.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() {
		var errs []error
		select {
		case <-p.done:
		default:
			errs = append(errs, signalGroup(p.cmd.Process, sigTerm))
			t := time.NewTimer(p.grace)
			select {
			case <-p.done:
			case <-t.C:
			}
			t.Stop()
		}
		errs = append(errs, signalGroup(p.cmd.Process, sigKill))
		<-p.done
		if err := errors.Join(errs...); err != nil {
			p.stopErr = fmt.Errorf("stopping %s (pid %d): %w", p.name, p.Pid(), err)
		}
	})
	return p.stopErr
}

// WaitLog waits until the child's log contains substr, and fails if the child exits first or timeout passes.
func (p *Process) WaitLog(substr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(p.log); err == nil && strings.Contains(string(b), substr) {
			return nil
		}
		if err := p.ExitError(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not log %q within %s; the end of %s:\n%s", p.name, substr, timeout, p.log, Tail(p.log, TailLines))
		}
		select {
		case <-tick.C:
		case <-p.done:
		}
	}
}

// Tail returns the last n lines of a file, for showing why something failed; empty when it cannot be read.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// FreePort asks the kernel for a free TCP port on the loopback address. OCM's binaries cannot listen on port
// 0, so they get a real one; another process may take it before the child binds it, which callers that care
// detect from the child's log ("address already in use").
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
