//go:build e2e && !unix

package stack

import "syscall"

// Without process groups and /proc there is no watchdog: stop the stack with Stop on every path.
func watchdogProcAttr() *syscall.SysProcAttr { return nil }

func childPIDs() []int { return nil }
