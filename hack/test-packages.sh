#!/usr/bin/env bash
# Prints the Go packages that `make test-unit` or `make test-integration` tests, one a line. Together they are
# exactly `go list ./...` (what `go test ./...` tests), each package in one of them:
#
#   integration  the envtest suites: each starts a kube-apiserver and etcd (hack/kube-binaries.sh); test/deploy
#                also runs helm (hack/helm-binary.sh) and test/sandbox the sandbox hub
#   unit         every other package: no API server (controllers/ tests its pure steps only)
#
# test/e2e builds only with -tags e2e, so it is in neither (make test-e2e).
#
#   hack/test-packages.sh unit
#   hack/test-packages.sh integration
set -euo pipefail
cd "$(dirname "$0")/.."

# A new envtest suite goes here; a directory that holds no package fails, so a rename cannot drop a suite.
integration=(test/deploy test/faults test/gitops test/integration test/policies test/sandbox)

integration_pkgs() {
  local d pkgs
  for d in "${integration[@]}"; do
    pkgs=$(go list "./$d/..." 2>/dev/null) || true
    if [[ -z "$pkgs" ]]; then
      echo "test-packages: ./$d/... holds no package; update the integration list in hack/test-packages.sh" >&2
      return 1
    fi
    echo "$pkgs"
  done
}

case "${1:-}" in
  integration) integration_pkgs ;;
  unit)
    in=$(integration_pkgs)
    go list ./... | grep -vxF -f <(echo "$in")
    ;;
  *) echo "usage: $0 unit|integration" >&2; exit 2 ;;
esac
