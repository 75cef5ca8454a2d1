package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat: 100 on every Linux this runs on.
const clockTicks = 100

// procStats is what /proc says of a process.
type procStats struct {
	// HWM is the peak resident set (VmHWM), RSS the current one (VmRSS), in bytes.
	HWM, RSS int64
	// CPU is user plus system time in seconds.
	CPU float64
}

func readProc(pid int) (procStats, error) {
	var s procStats
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmHWM:":
			s.HWM = kb * 1024
		case "VmRSS:":
			s.RSS = kb * 1024
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// Fields after the command, which is in parentheses and may contain spaces: state is field 3, utime 14.
	i := strings.LastIndexByte(string(stat), ')')
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 13 {
		return s, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	s.CPU = (utime + stime) / clockTicks
	return s, nil
}

// process is a child the harness started: the manager or OCM's work manager.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	err     error
	last    procStats // the last sample taken while it ran
	// metricsURL is its Prometheus endpoint, when it has one.
	metricsURL string
}

func startProcess(dir, name, bin string, args []string, env ...string) (*process, error) {
	// One log per start: <name>-1.log, <name>-2.log, ...
	logPath := ""
	for i := 1; ; i++ {
		logPath = filepath.Join(dir, fmt.Sprintf("%s-%d.log", name, i))
		if _, err := os.Stat(logPath); os.IsNotExist(err) {
			break
		}
	}
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// OCM's binaries leave serving-cert-* folders in TMPDIR: keep them in the run's folder.
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	cmd.Env = append(append(os.Environ(), "TMPDIR="+tmp), env...)
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	guard.watch(cmd.Process.Pid)
	return p, nil
}

// sample reads the process's /proc entries while it runs.
func (p *process) sample() procStats {
	if s, err := readProc(p.cmd.Process.Pid); err == nil {
		p.last = s
	}
	return p.last
}

// alive returns an error with the end of the log once the process has exited.
func (p *process) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited (%v); the end of %s:\n%s", p.name, p.err, p.logPath, tail(p.logPath, 30))
	default:
		return nil
	}
}

// stop samples the process a last time, sends SIGTERM and, after 10 s, SIGKILL.
func (p *process) stop() procStats {
	select {
	case <-p.exited:
		return p.last
	default:
	}
	st := p.sample()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			fmt.Fprintf(os.Stderr, "killing %s: %v\n", p.name, err)
		}
		<-p.exited
	}
	return st
}

// waitLog waits until the process's log contains substr.
func (p *process) waitLog(substr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if err := p.alive(); err != nil {
			return err
		}
		if b, err := os.ReadFile(p.logPath); err == nil && strings.Contains(string(b), substr) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not log %q within %s; the end of %s:\n%s", p.name, substr, timeout, p.logPath, tail(p.logPath, 30))
}

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

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// childPIDs lists the running children of this process (envtest does not tell the PIDs of its etcd and
// kube-apiserver, which survive the harness when it is killed).
func childPIDs() []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := os.Getpid()
	var out []int
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
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

// watchdog is a shell that outlives the harness: it learns the PIDs of every child and kills them if its
// stdin closes without "stop", which happens when the harness dies without cleaning up (SIGKILL, panic).
type watchdog struct {
	mu    sync.Mutex
	stdin io.WriteCloser
	cmd   *exec.Cmd
	seen  map[int]bool
}

var guard = &watchdog{}

const watchdogScript = `
pids=""
while read -r verb pid; do
  case "$verb" in
    watch) pids="$pids $pid" ;;
    stop) exit 0 ;;
  esac
done
[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
exit 0
`

func (w *watchdog) start() error {
	cmd := exec.Command("/bin/sh", "-c", watchdogScript)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	w.stdin, w.cmd, w.seen = stdin, cmd, map[int]bool{}
	return nil
}

func (w *watchdog) watch(pids ...int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stdin == nil {
		return
	}
	for _, pid := range pids {
		if pid == w.cmd.Process.Pid || w.seen[pid] {
			continue
		}
		w.seen[pid] = true
		_, _ = fmt.Fprintf(w.stdin, "watch %d\n", pid)
	}
}

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

// loadAvg is the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// machine describes the host for the report.
func machine() (cpu string, cores int, memGiB float64) {
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "model name") {
				if _, v, ok := strings.Cut(line, ":"); ok && cpu == "" {
					cpu = strings.TrimSpace(v)
				}
			}
			if strings.HasPrefix(line, "processor") {
				cores++
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				memGiB = kb / 1024 / 1024
			}
		}
	}
	return cpu, cores, memGiB
}
