//go:build unix && !linux

package proc

import "syscall"

// Only Linux has a parent-death signal; the Watchdog covers the other systems.
func setParentDeathSignal(*syscall.SysProcAttr) {}
