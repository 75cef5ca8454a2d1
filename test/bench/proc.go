package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/proc"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat: 100 on every Linux this runs on.
const clockTicks = 100

// procStats is what /proc says of a process.
type procStats struct {
	// HWM is the peak resident set (VmHWM), RSS the current one (VmRSS), in bytes.
	HWM, RSS int64
	// CPU is user plus system time in seconds.
	CPU float64
}

func readProc(pid int) (procStats, error) {
	var s procStats
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmHWM:":
			s.HWM = kb * 1024
		case "VmRSS:":
			s.RSS = kb * 1024
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// Fields after the command, which is in parentheses and may contain spaces: state is field 3, utime 14.
	i := strings.LastIndexByte(string(stat), ')')
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 13 {
		return s, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	s.CPU = (utime + stime) / clockTicks
	return s, nil
}

// process is a child the harness started: the manager or OCM's work manager. Starting and stopping it is
// internal/proc's; the harness adds its measurements through the pid.
type process struct {
	*proc.Process
	last procStats // the last sample taken while it ran
	// metricsURL is its Prometheus endpoint, when it has one.
	metricsURL string
}

// guard kills the children, envtest's included, if the harness dies without stopping them.
var guard *proc.Watchdog

func startProcess(dir, name, bin string, args []string, env ...string) (*process, error) {
	// One log per start: <name>-1.log, <name>-2.log, ...
	logPath := ""
	for i := 1; ; i++ {
		logPath = filepath.Join(dir, fmt.Sprintf("%s-%d.log", name, i))
		if _, err := os.Stat(logPath); os.IsNotExist(err) {
			break
		}
	}
	// OCM's binaries leave serving-cert-* folders in TMPDIR: keep them in the run's folder.
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	p, err := proc.Start(proc.Spec{
		Name:     name,
		Path:     bin,
		Args:     args,
		Env:      append([]string{"TMPDIR=" + tmp}, env...),
		Log:      logPath,
		Watchdog: guard,
	})
	if err != nil {
		return nil, err
	}
	return &process{Process: p}, nil
}

// sample reads the process's /proc entries while it runs.
func (p *process) sample() procStats {
	if s, err := readProc(p.Pid()); err == nil {
		p.last = s
	}
	return p.last
}

// alive is nil while the process runs, and for a process that was never started (the scenarios that run
// no manager pass an empty one); once it has exited, an error with the end of its log.
func (p *process) alive() error {
	if p.Process == nil {
		return nil
	}
	return p.ExitError()
}

// stop samples the process a last time and stops it (SIGTERM, a grace period, SIGKILL of its group).
func (p *process) stop() procStats {
	select {
	case <-p.Done():
		return p.last
	default:
	}
	st := p.sample()
	if err := p.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return st
}

// loadAvg is the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// machine describes the host for the report.
func machine() (cpu string, cores int, memGiB float64) {
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "model name") {
				if _, v, ok := strings.Cut(line, ":"); ok && cpu == "" {
					cpu = strings.TrimSpace(v)
				}
			}
			if strings.HasPrefix(line, "processor") {
				cores++
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				memGiB = kb / 1024 / 1024
			}
		}
	}
	return cpu, cores, memGiB
}
