#!/usr/bin/env bash
# Builds Open Cluster Management's own binaries from Go modules into bin/ocm/<version>/ and prints that
# directory. The build happens once; later calls reuse the cache. The version is the one of
# open-cluster-management.io/ocm pinned in hack/tools/ocm/go.mod.
#
#   hack/ocm-binaries.sh                  # both: placement (placement controller) and work (agent, manager)
#   hack/ocm-binaries.sh placement        # only the named ones
#
# Subcommands: `placement controller`, `work agent`, `work manager` (see hack/tools/ocm/README.md).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

tool_init ocm open-cluster-management.io/ocm

want=("$@")
if [[ ${#want[@]} -eq 0 ]]; then
  want=(placement work)
fi
for b in "${want[@]}"; do
  case "$b" in
    placement | work) ;;
    *) echo "ocm-binaries: unknown binary '$b' (want placement or work)" >&2; exit 2 ;;
  esac
done

major=${version#v}; major=${major%%.*}
minor=${version#v}; minor=${minor#*.}; minor=${minor%%.*}
ldflags="-s -w -X $module/pkg/version.versionFromGit=$version -X $module/pkg/version.majorFromGit=$major -X $module/pkg/version.minorFromGit=$minor"

for b in "${want[@]}"; do
  build_once "$b" "$module/cmd/$b" -ldflags "$ldflags"
done
echo "$out"
