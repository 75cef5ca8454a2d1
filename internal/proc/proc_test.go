//go:build linux

package proc

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// groupMembers lists the live (not zombie) processes of a process group, from /proc.
func groupMembers(pgid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(data), ')')
		f := strings.Fields(string(data[i+1:])) // state, ppid, pgrp, ...
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			out = append(out, pid)
		}
	}
	return out
}

func TestStop(t *testing.T) {
	const grace = 500 * time.Millisecond
	cases := map[string]struct {
		script string
		// ready is a line the script logs once it has set itself up.
		ready string
		// minStop is how long Stop must take at least: the grace period when SIGTERM is ignored.
		minStop time.Duration
	}{
		"a child that exits on SIGTERM": {
			script: `echo ready; exec sleep 300`,
			ready:  "ready",
		},
		"a grandchild goes with its group": {
			script: `sleep 300 & echo ready; wait`,
			ready:  "ready",
		},
		"a group that ignores SIGTERM is killed after the grace period": {
			script:  `trap '' TERM; sleep 300 & echo ready; wait; wait`,
			ready:   "ready",
			minStop: grace,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			log := filepath.Join(t.TempDir(), "child.log")
			p, err := Start(Spec{Name: "child", Path: "/bin/sh", Args: []string{"-c", tc.script}, Log: log, Grace: grace})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.WaitLog(tc.ready, 10*time.Second)).To(Succeed())
			g.Expect(groupMembers(p.Pid())).NotTo(BeEmpty())
			g.Expect(p.ExitError()).NotTo(HaveOccurred(), "it runs")

			start := time.Now()
			g.Expect(p.Stop()).To(Succeed())
			took := time.Since(start)
			g.Expect(took).To(BeNumerically(">=", tc.minStop))
			g.Expect(took).To(BeNumerically("<", grace+5*time.Second))
			g.Expect(p.Done()).To(BeClosed())
			g.Eventually(func() []int { return groupMembers(p.Pid()) }, 5*time.Second, 20*time.Millisecond).Should(BeEmpty())
			g.Expect(p.Stop()).To(Succeed(), "a second Stop")
		})
	}
}

func TestExitError(t *testing.T) {
	g := NewWithT(t)
	log := filepath.Join(t.TempDir(), "child.log")
	p, err := Start(Spec{Name: "the crasher", Path: "/bin/sh", Args: []string{"-c", "echo first; echo $GREETING; exit 3"},
		Env: []string{"GREETING=address already in use"}, Log: log})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(p.Done(), 10*time.Second).Should(BeClosed())
	g.Expect(p.ExitError()).To(MatchError(And(
		ContainSubstring("the crasher exited (exit status 3)"), ContainSubstring("first\naddress already in use"))))
	g.Expect(p.WaitLog("never logged", time.Minute)).To(MatchError(ContainSubstring("exit status 3")), "WaitLog gives up when the child exits")
	g.Expect(p.Stop()).To(Succeed(), "stopping an exited child")
	g.Expect(Tail(log, 1)).To(Equal("address already in use"))
}

func TestLogIsAppended(t *testing.T) {
	g := NewWithT(t)
	log := filepath.Join(t.TempDir(), "child.log")
	for _, word := range []string{"one", "two"} {
		p, err := Start(Spec{Name: word, Path: "/bin/sh", Args: []string{"-c", "echo " + word}, Log: log})
		g.Expect(err).NotTo(HaveOccurred())
		g.Eventually(p.Done(), 10*time.Second).Should(BeClosed())
	}
	g.Expect(Tail(log, 10)).To(Equal("one\ntwo"))
}

func TestWriters(t *testing.T) {
	g := NewWithT(t)
	var stdout, stderr bytes.Buffer
	p, err := Start(Spec{Name: "script", Path: "/bin/sh", Args: []string{"-c", "echo out; echo err >&2"}, Stdout: &stdout, Stderr: &stderr})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(p.Done(), 10*time.Second).Should(BeClosed())
	g.Expect(p.Err()).NotTo(HaveOccurred())
	g.Expect(stdout.String()).To(Equal("out\n"))
	g.Expect(stderr.String()).To(Equal("err\n"))
}

// The watchdog kills the groups it watches once its stdin closes without "stop", as when this process dies.
func TestWatchdog(t *testing.T) {
	g := NewWithT(t)
	w, err := StartWatchdog()
	g.Expect(err).NotTo(HaveOccurred())
	log := filepath.Join(t.TempDir(), "child.log")
	p, err := Start(Spec{Name: "child", Path: "/bin/sh", Args: []string{"-c", "sleep 300 & echo ready; wait"}, Log: log, Watchdog: w})
	g.Expect(err).NotTo(HaveOccurred())
	defer p.Stop() //nolint:errcheck // the check is below; this only cleans up after a failure
	g.Expect(p.WaitLog("ready", 10*time.Second)).To(Succeed())

	// What the kernel does when this process dies: the watchdog's stdin closes.
	g.Expect(w.stdin.Close()).To(Succeed())
	g.Eventually(p.Done(), 10*time.Second).Should(BeClosed())
	g.Eventually(func() []int { return groupMembers(p.Pid()) }, 5*time.Second, 20*time.Millisecond).Should(BeEmpty())
	g.Expect(w.cmd.Wait()).To(Succeed())
}

func TestWatchdogStop(t *testing.T) {
	g := NewWithT(t)
	w, err := StartWatchdog()
	g.Expect(err).NotTo(HaveOccurred())
	p, err := Start(Spec{Name: "child", Path: "sleep", Args: []string{"300"}, Watchdog: w})
	g.Expect(err).NotTo(HaveOccurred())
	w.Stop()
	g.Consistently(p.Done(), 300*time.Millisecond).ShouldNot(BeClosed(), "a stopped watchdog kills nothing")
	g.Expect(p.Stop()).To(Succeed())
	var nilWatchdog *Watchdog
	nilWatchdog.Watch(1)
	nilWatchdog.Stop()
}

func TestChildPIDs(t *testing.T) {
	g := NewWithT(t)
	p, err := Start(Spec{Name: "child", Path: "sleep", Args: []string{"300"}})
	g.Expect(err).NotTo(HaveOccurred())
	defer p.Stop() //nolint:errcheck // cleanup
	g.Expect(ChildPIDs()).To(ContainElement(p.Pid()))
	g.Expect(Exists(p.Pid())).To(BeTrue())
}

func TestFreePort(t *testing.T) {
	g := NewWithT(t)
	port, err := FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(port).To(BeNumerically(">", 0))
}
