#!/usr/bin/env bash
# Fails when generated files (deepcopy, CRD, the manager's and transparent mode's ClusterRoles), go.mod/go.sum
# or formatting are not current: it regenerates them and compares checksums from before and after, so it works
# on uncommitted trees too. Then go vet and golangci-lint (make lint: .golangci.yml, the e2e build tag included)
# must pass.
set -euo pipefail
cd "$(dirname "$0")/.."

generated() {
  ls api/*/zz_generated.deepcopy.go api/*/*/zz_generated.deepcopy.go config/crd/bases/*.yaml config/rbac/role.yaml config/rbac/fleet/role.yaml go.mod go.sum
}
checksums() { generated | xargs sha256sum; }

before=$(checksums)
make --no-print-directory generate manifests >/dev/null
hack/chart-sync.sh --verify
go mod tidy
after=$(checksums)
if [[ "$before" != "$after" ]]; then
  echo "Generated files were stale and have been regenerated; review and commit them:" >&2
  diff <(echo "$before") <(echo "$after") | awk '/^[<>]/ {print "  " $3}' | sort -u >&2
  exit 1
fi

unformatted=$(gofmt -l $(git ls-files --cached --others --exclude-standard '*.go'))
if [[ -n "$unformatted" ]]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
go vet -tags e2e ./test/e2e/...
make --no-print-directory lint
echo "verify: generated files, go.mod and formatting are current; go vet and golangci-lint pass"
