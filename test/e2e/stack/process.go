//go:build e2e

package stack

import (
	"path/filepath"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/proc"
)

// startProcess starts bin with args, its output in logs/<name>.log, in a process group of its own that the
// watchdog kills if the tests die first (see proc). Every child gets TMPDIR set to the run's folder: OCM's
// binaries write a serving-cert-* folder there on every start and never remove it.
func (s *Stack) startProcess(name, bin string, args []string, env ...string) error {
	p, err := proc.Start(proc.Spec{
		Name:     name,
		Path:     bin,
		Args:     args,
		Env:      append([]string{"TMPDIR=" + s.tmpDir}, env...),
		Log:      filepath.Join(s.Dir, "logs", name+".log"),
		Watchdog: s.watchdog,
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	return nil
}
