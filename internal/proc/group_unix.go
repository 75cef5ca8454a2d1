//go:build unix

package proc

import (
	"errors"
	"os"
	"syscall"
)

// sysProcAttr puts a child in a process group of its own, led by it.
func sysProcAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(attr)
	return attr
}

// signalGroup sends sig to the process group p leads; a group that is already gone is not an error.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	if err := syscall.Kill(-p.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// Exists reports whether a process with this id still runs (a zombie counts until it is reaped).
func Exists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func watchdogProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
