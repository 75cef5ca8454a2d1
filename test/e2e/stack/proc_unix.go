//go:build e2e && unix

package stack

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

func watchdogProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// childPIDs lists the running children of this process from /proc (none where there is no /proc): envtest
// does not tell the PIDs of the API servers and etcds it starts, and the watchdog needs them.
func childPIDs() []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := os.Getpid()
	var out []int
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process has exited since the glob
		}
		// The fields after the command name, which is in parentheses and may contain anything: state, ppid, ...
		i := strings.LastIndexByte(string(data), ')')
		fields := strings.Fields(string(data[i+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil && ppid == self {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			out = append(out, pid)
		}
	}
	return out
}
