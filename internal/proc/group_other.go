//go:build !unix

package proc

import (
	"errors"
	"os"
	"syscall"
)

// Without process groups a child is stopped alone, and killed at once.

func sysProcAttr() *syscall.SysProcAttr { return nil }

func signalGroup(p *os.Process, _ syscall.Signal) error {
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// Exists reports whether a process with this id still runs; it cannot tell here and says no.
func Exists(int) bool { return false }

func watchdogProcAttr() *syscall.SysProcAttr { return nil }
