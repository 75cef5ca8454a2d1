//go:build linux

package main

import "syscall"

// childAttr makes the kernel kill a child when the harness dies.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
