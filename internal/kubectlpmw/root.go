// Package kubectlpmw is the kubectl plugin kubectl-pmw (cmd/kubectl-pmw): cobra commands that turn manifests,
// Helm charts and kustomize folders into a PlacementManifestWork (wrap, render, over internal/bundle), preview what
// the manager would do with one (plan, over controllers.Preview) and show where one stands (status). docs/cli.md
// is its user documentation.
package kubectlpmw

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Streams are the standard streams of a command, replaced in tests.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// OSStreams are the process's standard streams.
func OSStreams() *Streams {
	return &Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}
}

// version is set at build time: -ldflags "-X <module>/internal/kubectlpmw.version=v0.1.0" (make build does).
var version = ""

// Version is the plugin's version: the one set at build time, else the module's from the build info, else
// "devel".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// NewRootCommand is kubectl-pmw with its subcommands, reading and writing s.
func NewRootCommand(s *Streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-pmw",
		Short: "Deliver manifests, Helm charts and kustomize folders to an OCM fleet as PlacementManifestWorks",
		Long: `kubectl pmw works with PlacementManifestWorks on an Open Cluster Management hub.

  wrap      turn manifests (files, folders or stdin) into a PlacementManifestWork; also a Helm post-renderer
  render    turn a Helm chart or a kustomize folder into a PlacementManifestWork
  plan      show what the manager would do with a PlacementManifestWork, without writing anything
  status    show a PlacementManifestWork's conditions and a table of its clusters
  rollout   wait for a rollout, list revisions, undo, pause, resume and retry (as kubectl rollout)

It reaches the hub as kubectl does (--kubeconfig, --context, -n). Exit codes: 0 ok, 1 bad usage or input,
2 the hub unreachable, without the CRD or forbidden, 3 status found the PlacementManifestWork not Ready (or
rollout status found the rollout failed, or timed out).
See docs/cli.md.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Help and usage say "kubectl pmw", as the user types it.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl pmw"},
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	// cobra's errors about flags are bad usage; say where to look.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError("%v; see '%s --help'", err, c.CommandPath())
	})
	root.AddCommand(
		newWrapCommand(s),
		newRenderCommand(s),
		newPlanCommand(s),
		newStatusCommand(s),
		newRolloutCommand(s),
		newVersionCommand(s),
	)
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Example = `  # bash, for this shell
  source <(kubectl-pmw completion bash)

  # zsh, for every new shell
  kubectl-pmw completion zsh > "${fpath[1]}/_kubectl-pmw"

  # kubectl 1.26 and later complete plugins through a kubectl_complete-pmw on the PATH
  printf '#!/bin/sh\nexec kubectl-pmw __complete "$@"\n' > ~/.local/bin/kubectl_complete-pmw
  chmod +x ~/.local/bin/kubectl_complete-pmw`
		}
	}
	return root
}

// Execute runs kubectl-pmw with args and returns its exit code; errors are printed to s.Err as one line.
func Execute(ctx context.Context, args []string, s *Streams) int {
	root := NewRootCommand(s)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil && !errors.Is(err, errNotReady) {
		fmt.Fprintf(s.Err, "Error: %s\n", oneLine(err.Error()))
	}
	return ExitCode(err)
}

func newVersionCommand(s *Streams) *cobra.Command {
	var short bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if short {
				_, err := fmt.Fprintln(s.Out, Version())
				return err
			}
			goVersion := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				goVersion = bi.GoVersion
			}
			_, err := fmt.Fprintf(s.Out, "kubectl-pmw %s (%s)\n", Version(), goVersion)
			return err
		},
	}
	cmd.Flags().BoolVar(&short, "short", false, "Print the version only")
	return cmd
}

// nameArg accepts exactly one argument, the NAME of a PlacementManifestWork, and says so when it is missing.
func nameArg(cmd *cobra.Command, args []string) error {
	switch len(args) {
	case 1:
		return nil
	case 0:
		return usageError("%s needs NAME; see '%s --help'", cmd.CommandPath(), cmd.CommandPath())
	default:
		return usageError("%s takes NAME, got %q; see '%s --help'", cmd.CommandPath(), strings.Join(args, " "), cmd.CommandPath())
	}
}

// fixedCompletions completes a flag with the given values.
func fixedCompletions(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}
