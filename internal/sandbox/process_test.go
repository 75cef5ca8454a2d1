//go:build unix

package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/proc"
)

func writeScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunScript(t *testing.T) {
	script := writeScript(t, "echo '>> building placement' >&2\necho /some/dir\n")
	var progress bytes.Buffer
	dir, err := runScript(context.Background(), &progress, script)
	if err != nil {
		t.Fatal(err)
	}
	if dir != "/some/dir" {
		t.Errorf("runScript returned %q, want /some/dir", dir)
	}
	if !strings.Contains(progress.String(), ">> building placement") {
		t.Errorf("progress %q does not pass the script's stderr through", progress.String())
	}
}

// Ctrl-C during a first build must stop the build too (go build is a child of the script), not leave it
// running in the background.
func TestRunScriptCancelStopsItsChildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	script := writeScript(t, "sleep 300 &\necho $! > "+pidFile+"\nwait\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := runScript(ctx, &bytes.Buffer{}, script)
		done <- err
	}()
	var pid int
	deadline := time.Now().Add(10 * time.Second)
	for pid == 0 && time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil && len(bytes.TrimSpace(b)) > 0 {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		} else {
			time.Sleep(20 * time.Millisecond) // polling for a file another process writes
		}
	}
	if pid == 0 {
		t.Fatal("the script did not start its child")
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("a cancelled script returned no error")
		}
	case <-time.After(proc.DefaultGrace + 5*time.Second):
		t.Fatal("runScript did not return after cancel")
	}
	deadline = time.Now().Add(5 * time.Second)
	for proc.Exists(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if proc.Exists(pid) {
		t.Errorf("the script's child (pid %d) outlived the cancel", pid)
	}
}
