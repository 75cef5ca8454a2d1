//go:build unix

package sandbox

import (
	"errors"
	"os/exec"
	"syscall"
)

// inOwnProcessGroup makes cmd lead a process group of its own, so a terminal's Ctrl-C does not reach it
// before the sandbox has stopped the controllers that talk to it, and so stopping it stops its children too
// (a build script's go build).
func inOwnProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group cmd leads; a group that is already gone is not an error.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// processExists reports whether a process with this id still runs (a zombie counts until it is reaped).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
