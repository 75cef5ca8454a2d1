//go:build !unix

package sandbox

import (
	"os/exec"
	"syscall"
)

// The sandbox stops its child processes through process groups, which only Unix has; elsewhere it stops
// the child alone.

func inOwnProcessGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, _ syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

func processExists(int) bool { return false }
