// Package faults runs the PlacementManifestWork manager against a real kube-apiserver (envtest) while things go
// wrong: the manager is killed mid-fan-out and restarted, two managers hand leadership over, the API server
// restarts, writes fail with conflicts and server errors, a ControllerRevision create waits for the works, and
// clusters are deleted from under their works. It also checks the security promises that need a running
// manager: a PlacementManifestWork reaches only the clusters decided for a Placement of its own namespace, and
// never touches a ManifestWork it does not own.
//
// Every spec starts its own managers in this process (fw.StartManager, which sets them up as cmd/main.go does)
// and they stop when it ends, so no spec sees another's manager. The tests play OCM: they write
// PlacementDecisions as the placement controller would and ManifestWork status as the work agent would.
package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

// Timeouts are generous: the suite shares two cores with other suites and runs under the race detector.
const (
	timeout     = 60 * time.Second
	longTimeout = 3 * time.Minute
	interval    = 200 * time.Millisecond
)

var (
	// fw starts the managers of each spec; Teardown stops any a failed spec left behind.
	fw  = &suite.Framework{Timeout: timeout, Interval: interval}
	k8s client.Client

	// certBackups are the directories restartAPIServer keeps the API server's certificates in.
	certBackups []string
)

func TestFaults(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "PlacementManifestWork faults and security")
}

var _ = BeforeSuite(func() {
	fw.Init()
	k8s = fw.Client
})

var _ = AfterSuite(func() {
	fw.Teardown()
	for _, dir := range certBackups {
		Expect(os.RemoveAll(dir)).To(Succeed())
	}
})

// restartAPIServer kills envtest's kube-apiserver, as a crash would, and starts it again on the same port with
// the same certificates, while etcd keeps running.
//
// A graceful stop (APIServer.Stop) is no use while a manager holds watches open: kube-apiserver waits for them
// past envtest's 20-second stop timeout and is killed anyway. So the process is sent SIGKILL by its id (the
// kube-apiserver whose --cert-dir is this hub's), then APIServer.Stop cleans up its state. Stop also deletes
// the certificate directory it created (and forgets it), after which a plain Start would make a new serving CA
// that no existing client trusts; the directory is copied first and given back to the APIServer, which then
// reuses the serving certificate. The client CA lives in memory (CertAuthn) and is written again on Start, so
// the certificates in cfg stay valid, and the secure port, once allocated, is kept.
func restartAPIServer() {
	s := fw.Env.ControlPlane.APIServer
	backup, err := os.MkdirTemp("", "pmw-faults-apiserver-")
	Expect(err).NotTo(HaveOccurred())
	certBackups = append(certBackups, backup)
	entries, err := os.ReadDir(s.CertDir)
	Expect(err).NotTo(HaveOccurred())
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.CertDir, e.Name()))
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(backup, e.Name()), b, 0o600)).To(Succeed())
	}

	pid := apiServerPID(s.CertDir)
	Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
	Eventually(func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return os.IsNotExist(err)
	}, timeout, "50ms").Should(BeTrue(), "kube-apiserver %d is gone", pid)
	// Stop notices the process has exited; a call racing with envtest's own reaping of it fails and is repeated.
	Eventually(s.Stop, timeout, interval).Should(Succeed())

	s.CertDir = backup
	Expect(s.Start()).To(Succeed())
}

// apiServerPID finds the process id of the kube-apiserver this suite started, by its certificate directory.
func apiServerPID(certDir string) int {
	entries, err := os.ReadDir("/proc")
	Expect(err).NotTo(HaveOccurred())
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if filepath.Base(args[0]) == "kube-apiserver" && slices.Contains(args, "--cert-dir="+certDir) {
			pids = append(pids, pid)
		}
	}
	Expect(pids).To(HaveLen(1), "one kube-apiserver serves from %s", certDir)
	return pids[0]
}

// placedNamespace creates a namespace with a Placement "p" decided to n new clusters, the start of most specs.
func placedNamespace(ctx context.Context, name string, n int) (ns string, clusters []string) {
	ns = fw.NewNamespace(name)
	clusters = fw.NewClusters(n)
	Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
	fw.Decide(ns, "p", "p-decision-1", clusters...)
	return ns, clusters
}
