package kubectlpmw

import (
	"errors"
	"fmt"
)

// Exit codes of kubectl-pmw. Scripts gate on them, so they are part of the plugin's interface (docs/cli.md).
const (
	// ExitOK: the command did what it was asked; for status, the PlacementManifestWork is Ready.
	ExitOK = 0
	// ExitUsage: bad usage or bad input (an unknown flag, unreadable YAML, a chart that does not render, a
	// PlacementManifestWork that does not exist). Nothing was written to stdout.
	ExitUsage = 1
	// ExitHub: the hub cannot be used: unreachable, no kubeconfig, the CRD not installed, or access forbidden.
	ExitHub = 2
	// ExitNotReady: status found the PlacementManifestWork not Ready for its current generation (like a
	// `kubectl wait` that timed out, without waiting; the status was printed), or rollout status found the
	// rollout failed, or timed out waiting for it.
	ExitNotReady = 3
)

// exitError is an error with the exit code it ends the command with.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError is a bad-usage or bad-input error (ExitUsage).
func usageError(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// hubError is an error reaching or using the hub (ExitHub).
func hubError(err error) error {
	return &exitError{code: ExitHub, err: err}
}

// errNotReady ends status with ExitNotReady after the status was printed; it has nothing more to say.
var errNotReady = &exitError{code: ExitNotReady, err: errors.New("not ready")}

// ExitCode is the exit code an error of a command ends the process with: ExitOK for nil, the code of an
// exitError, and ExitUsage for anything else (cobra's own errors are about flags and arguments).
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return ExitUsage
}
