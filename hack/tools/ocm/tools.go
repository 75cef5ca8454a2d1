//go:build tools

// Package tools pins the commands this module builds so that go mod tidy keeps their dependencies.
package tools

import (
	_ "open-cluster-management.io/ocm/cmd/placement"
	_ "open-cluster-management.io/ocm/cmd/work"
)
