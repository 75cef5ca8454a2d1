// Command kubectl-pmw is the kubectl plugin for PlacementManifestWorks (kubectl pmw ...): its commands are in
// internal/kubectlpmw, its documentation in docs/cli.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/kubectlpmw"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := kubectlpmw.Execute(ctx, os.Args[1:], kubectlpmw.OSStreams())
	stop()
	os.Exit(code)
}
