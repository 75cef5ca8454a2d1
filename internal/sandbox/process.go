package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a child gets to exit after SIGTERM before it is killed.
const stopGrace = 10 * time.Second

// command prepares a child in its own process group that is stopped, group and all, with SIGTERM when ctx
// ends, and killed if it outlives stopGrace.
func command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	inOwnProcessGroup(cmd)
	cmd.Cancel = func() error { return signalGroup(cmd, syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	return cmd
}

// runScript runs one of the repository's hack scripts and returns what it printed on stdout (a directory).
// The scripts build binaries on first use and report that on stderr, which goes to progress; a build that
// takes long is also announced every 30 seconds so the wait does not look like a hang.
func runScript(ctx context.Context, progress io.Writer, script string, args ...string) (string, error) {
	cmd := command(ctx, script, args...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = progress
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("running %s: %w", filepath.Base(script), err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	start := time.Now()
	ticker := time.NewTicker(30 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return "", fmt.Errorf("running %s %s: %w", filepath.Base(script), strings.Join(args, " "), err)
			}
			return strings.TrimSpace(stdout.String()), nil
		case <-ticker.C:
			fmt.Fprintf(progress, ">> still building (%s so far)\n", time.Since(start).Round(time.Second))
		}
	}
}

// freePort asks the kernel for a free TCP port on the loopback address. OCM's binaries cannot listen on port
// 0, so they get a real one; the tiny window before the child binds it is acceptable in a sandbox.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// child is a running long-lived process, such as the placement controller.
type child struct {
	name   string
	cmd    *exec.Cmd
	cancel context.CancelFunc
	// done is closed when the process has exited and been reaped; err is its exit error then.
	done chan struct{}
	err  error
	log  *os.File
}

// startChild starts a long-lived process whose output is appended to logPath.
func startChild(parent context.Context, name, logPath string, env []string, bin string, args ...string) (*child, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating the log of %s: %w", name, err)
	}
	// The child lives until stop, not until the caller's context ends, so the sandbox decides the order in
	// which things stop.
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	cmd := command(ctx, bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		cancel()
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, cancel: cancel, done: make(chan struct{}), log: logFile}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// pid is the child's process id.
func (c *child) pid() int { return c.cmd.Process.Pid }

// stop terminates the child's process group and waits until it has exited.
func (c *child) stop() error {
	c.cancel()
	<-c.done
	return c.log.Close()
}

// exited describes an unexpected exit.
func (c *child) exited() error {
	return fmt.Errorf("%s exited unexpectedly (%v); its log is %s", c.name, c.err, c.log.Name())
}

// lostPortRace reports whether the child exited because its port was taken after freePort found it free.
func (c *child) lostPortRace() bool {
	select {
	case <-c.done:
	default:
		return false
	}
	return strings.Contains(tail(c.log.Name(), 20), "address already in use")
}

// tail returns the last n lines of a file, for showing why something failed before the file is removed.
func tail(path string, n int) string {
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

// ProcessesMentioning returns the ids of running processes whose command line contains any of the markers
// (the run's folder, envtest's data folders), to prove that a run left nothing behind. It reads /proc and
// returns nothing where there is none.
func ProcessesMentioning(markers []string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue // not a process
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue // gone meanwhile, a kernel thread, or a zombie
		}
		for _, m := range markers {
			if m != "" && bytes.Contains(cmdline, []byte(m)) {
				out = append(out, pid)
				break
			}
		}
	}
	return out, nil
}
