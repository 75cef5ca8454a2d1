package sandbox_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
)

// TestSandboxStopsWhenItsOutputGoesAway runs the sandbox command as a user does and takes its terminal or its
// reader away: each must stop it as Ctrl-C does, with nothing it started left running and its run folder
// removed. Dying at once would leave kube-apiserver and etcd behind, holding ports and disk.
func TestSandboxStopsWhenItsOutputGoesAway(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver, etcd and OCM's placement controller")
	}
	bin := filepath.Join(t.TempDir(), "sandbox")
	build := exec.Command("go", "build", "-o", bin, "./cmd/sandbox")
	build.Dir = envhub.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/sandbox: %v\n%s", err, out)
	}

	t.Run("an argument that is not a flag is refused", func(t *testing.T) {
		var stderr bytes.Buffer
		// --once and a short --timeout end a sandbox that would ignore the argument and start.
		cmd := exec.Command(bin, "--once", "--timeout", "1s", "clusters=8")
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr.String(), `unexpected argument "clusters=8"`) {
			t.Errorf("the sandbox ended with %v, want exit code 2 naming the argument; stderr:\n%s", err, stderr.String())
		}
	})

	for _, tc := range []struct {
		name string
		// away takes the output away once the sandbox runs: out is the read end of its standard output.
		away func(t *testing.T, p *os.Process, out io.Closer)
	}{{
		name: "the terminal closes (SIGHUP)",
		away: func(t *testing.T, p *os.Process, _ io.Closer) {
			if err := p.Signal(syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
		},
	}, {
		name: "the reader of its output goes away (| head)",
		away: func(t *testing.T, _ *os.Process, out io.Closer) {
			// Its next status block then meets a closed pipe.
			if err := out.Close(); err != nil {
				t.Fatal(err)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "--clusters", "1", "--ready-delay", "1s", "--duration", "10m")
			cmd.Dir = envhub.RepoRoot()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			runDir := awaitRunDir(t, stdout)
			t.Cleanup(func() { killLeftovers(t, runDir) })

			tc.away(t, cmd.Process, stdout)
			go func() { _, _ = io.Copy(io.Discard, stdout) }() // a closed pipe reads nothing; a SIGHUP keeps it drained
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(3 * time.Minute):
				_ = cmd.Process.Kill()
				t.Fatalf("the sandbox did not stop within 3 minutes; stderr:\n%s", stderr.String())
			}
			// Stopped in order it exits (0 once running, 130 if interrupted while starting); killed by the
			// signal it does not.
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signaled() {
				t.Errorf("the sandbox ended with %v, want an exit after its orderly stop; stderr:\n%s", err, stderr.String())
			}
			if strings.Contains(stderr.String(), "Unhandled Error") {
				t.Errorf("the sandbox logged an error:\n%s", stderr.String())
			}
			if left := processesIn(runDir); len(left) > 0 {
				t.Errorf("processes of the run left running: %v", left)
			}
			if _, err := os.Stat(runDir); !os.IsNotExist(err) {
				t.Errorf("the run's folder %s is still there (%v)", runDir, err)
			}
		})
	}
}

// awaitRunDir reads the sandbox's output until it names its kubeconfig, and returns the run's folder that holds it.
func awaitRunDir(t *testing.T, stdout io.Reader) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if _, path, ok := strings.Cut(s.Text(), "export KUBECONFIG="); ok {
				found <- filepath.Dir(strings.TrimSpace(path))
				return
			}
		}
		close(found)
	}()
	select {
	case dir, ok := <-found:
		if !ok {
			t.Fatal("the sandbox's output ended before it named its kubeconfig")
		}
		return dir
	case <-time.After(10 * time.Minute): // a first run builds the placement controller
		t.Fatal("the sandbox named no kubeconfig within 10 minutes")
	}
	return ""
}

// processesIn lists the processes whose command line names dir (the run's kube-apiserver, etcd and placement
// controller all do), as "pid args".
func processesIn(dir string) []string {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var out []string
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(data, []byte(dir)) {
			continue
		}
		out = append(out, filepath.Base(filepath.Dir(p))+" "+string(bytes.ReplaceAll(data, []byte{0}, []byte(" "))))
	}
	return out
}

// killLeftovers kills what a failed run left, so that one failure does not hold ports for the next tests.
func killLeftovers(t *testing.T, dir string) {
	for _, p := range processesIn(dir) {
		pid, _, _ := strings.Cut(p, " ")
		if n, err := strconv.Atoi(pid); err == nil {
			_ = syscall.Kill(n, syscall.SIGKILL)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Log(err)
	}
}
