//go:build e2e

package stack

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a process gets to exit after SIGTERM before it is killed.
const stopGrace = 10 * time.Second

// process is one child the stack started (not envtest's API servers and etcds, which envtest runs).
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	err     error // what Wait returned; read only after exited is closed
}

// startProcess starts bin with args, its output in logs/<name>.log. Every child gets TMPDIR set to the run's
// folder: OCM's binaries write a serving-cert-* folder there on every start and never remove it.
func (s *Stack) startProcess(name, bin string, args []string, env ...string) error {
	logPath := filepath.Join(s.Dir, "logs", name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("creating the log of %s: %w", name, err)
	}
	// The child has its own copy of the descriptor once started.
	defer log.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(append(os.Environ(), "TMPDIR="+s.tmpDir), env...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	s.watchdog.watch(cmd.Process.Pid)
	return nil
}

// stop sends SIGTERM and, after stopGrace, SIGKILL.
func (p *process) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(stopGrace):
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing %s (pid %d): %w", p.name, p.cmd.Process.Pid, err)
	}
	<-p.exited
	return nil
}

// exitError says that the process has exited, and how, with the end of its log; nil while it runs.
func (p *process) exitError() error {
	select {
	case <-p.exited:
	default:
		return nil
	}
	return fmt.Errorf("%s exited (%v); the end of %s:\n%s", p.name, p.err, p.logPath, tail(p.logPath, 20))
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freePort asks the kernel for a free TCP port on the loopback address. OCM's binaries crash with port 0, so
// they get a real one; the short window before the child binds it is acceptable on a test machine.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// watchdog is a small shell process that outlives the stack's own process. It learns the PID of every process
// of the stack, envtest's included (those run in their own process groups and survive their parent's death),
// and kills them all if its stdin closes without a "stop" first: that happens when the test process dies,
// even by SIGKILL or a `go test -timeout` panic, before it could stop the stack itself.
type watchdog struct {
	mu    sync.Mutex
	stdin io.WriteCloser // nil where no watchdog runs
	cmd   *exec.Cmd
}

const watchdogScript = `
pids=""
while read -r verb pid; do
  case "$verb" in
    watch) pids="$pids $pid" ;;
    stop) exit 0 ;;
  esac
done
# stdin closed without "stop": whoever started us is gone; end what it left behind.
[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
exit 0
`

func startWatchdog() (*watchdog, error) {
	attr := watchdogProcAttr()
	if attr == nil {
		return &watchdog{}, nil
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript)
	// Its own process group, so a Ctrl-C that interrupts the tests does not kill it before it can act.
	cmd.SysProcAttr = attr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the watchdog: %w", err)
	}
	return &watchdog{stdin: stdin, cmd: cmd}, nil
}

func (w *watchdog) watch(pids ...int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stdin == nil {
		return
	}
	for _, pid := range pids {
		if pid == w.cmd.Process.Pid {
			continue // it must not kill itself before the others
		}
		// A write error means the watchdog died; the stack still stops its processes in Stop.
		_, _ = fmt.Fprintf(w.stdin, "watch %d\n", pid)
	}
}

// stop ends the watchdog without it killing anything: the stack has stopped its processes itself.
func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stdin == nil {
		return
	}
	_, _ = io.WriteString(w.stdin, "stop\n")
	_ = w.stdin.Close()
	_ = w.cmd.Wait()
	w.stdin = nil
}
