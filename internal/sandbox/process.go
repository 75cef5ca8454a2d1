package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/proc"
)

// runScript runs one of the repository's hack scripts and returns what it printed on stdout (a directory).
// The scripts build binaries on first use and report that on stderr, which goes to progress; a build that
// takes long is also announced every 30 seconds so the wait does not look like a hang. When ctx ends the
// script is stopped, its children (go build) too.
func runScript(ctx context.Context, progress io.Writer, script string, args ...string) (string, error) {
	var stdout bytes.Buffer
	p, err := proc.Start(proc.Spec{Name: filepath.Base(script), Path: script, Args: args, Stdout: &stdout, Stderr: progress})
	if err != nil {
		return "", err
	}
	start := time.Now()
	ticker := time.NewTicker(30 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-p.Done():
			if err := p.Err(); err != nil {
				return "", fmt.Errorf("running %s %s: %w", filepath.Base(script), strings.Join(args, " "), err)
			}
			return strings.TrimSpace(stdout.String()), nil
		case <-ctx.Done():
			return "", errors.Join(fmt.Errorf("running %s: %w", filepath.Base(script), ctx.Err()), p.Stop())
		case <-ticker.C:
			fmt.Fprintf(progress, ">> still building (%s so far)\n", time.Since(start).Round(time.Second))
		}
	}
}

// lostPortRace reports whether a child exited because its port was taken after proc.FreePort found it free.
func lostPortRace(p *proc.Process) bool {
	select {
	case <-p.Done():
	default:
		return false
	}
	return strings.Contains(proc.Tail(p.LogPath(), 20), "address already in use")
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
