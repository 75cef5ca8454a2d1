package proc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Watchdog is a small shell process that outlives this one. It learns the process ids of the children, and
// kills them and their process groups if its stdin closes without a "stop" first: that happens when this
// process dies, even by SIGKILL or a `go test -timeout` panic, before it could stop its children itself.
// Its methods do nothing on a nil Watchdog, and where there are no process groups (see StartWatchdog).
type Watchdog struct {
	mu    sync.Mutex
	stdin io.WriteCloser // nil where no watchdog runs, and once stopped
	cmd   *exec.Cmd
	seen  map[int]bool
}

// watchdogScript kills each process group, then the process itself (for processes that do not lead a group,
// such as envtest's).
const watchdogScript = `
pids=""
while read -r verb pid; do
  case "$verb" in
    watch) pids="$pids $pid" ;;
    stop) exit 0 ;;
  esac
done
# stdin closed without "stop": whoever started us is gone; end what it left behind.
for pid in $pids; do
  kill -KILL -$pid 2>/dev/null
  kill -KILL $pid 2>/dev/null
done
exit 0
`

// StartWatchdog starts a watchdog; where there are no process groups it returns one that does nothing.
func StartWatchdog() (*Watchdog, error) {
	attr := watchdogProcAttr()
	if attr == nil {
		return &Watchdog{}, nil
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript)
	// Its own process group, so a Ctrl-C that interrupts this process does not kill it before it can act.
	cmd.SysProcAttr = attr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the watchdog: %w", err)
	}
	return &Watchdog{stdin: stdin, cmd: cmd, seen: map[int]bool{}}, nil
}

// Watch adds processes for the watchdog to kill; a process it already knows is not added twice.
func (w *Watchdog) Watch(pids ...int) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stdin == nil {
		return
	}
	for _, pid := range pids {
		if pid == w.cmd.Process.Pid || w.seen[pid] {
			continue // it must not kill itself before the others
		}
		w.seen[pid] = true
		// A write error means the watchdog died; the caller still stops its children itself.
		_, _ = fmt.Fprintf(w.stdin, "watch %d\n", pid)
	}
}

// Stop ends the watchdog without it killing anything: the caller has stopped its children itself.
func (w *Watchdog) Stop() {
	if w == nil {
		return
	}
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

// ChildPIDs lists the running children of this process from /proc (none where there is no /proc): envtest
// does not tell the ids of the API servers and etcds it starts, and the watchdog needs them.
func ChildPIDs() []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := os.Getpid()
	var out []int
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process has exited since the glob
		}
		// The fields after the command name, which is in parentheses and may contain anything: state, ppid, ...
		i := strings.LastIndexByte(string(data), ')')
		fields := strings.Fields(string(data[i+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil && ppid == self {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			out = append(out, pid)
		}
	}
	return out
}
