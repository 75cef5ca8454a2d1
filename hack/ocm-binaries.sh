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

root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/hack/tools/ocm"
module=open-cluster-management.io/ocm
# Matches both `require open-cluster-management.io/ocm vX` and the module's line inside a require block.
version=$(awk -v m="$module" '$1 != "replace" { for (i = 1; i < NF; i++) if ($i == m && $(i+1) ~ /^v/) { print $(i+1); exit } }' "$tools/go.mod")
if [[ -z "$version" ]]; then
  echo "ocm-binaries: no version of $module in $tools/go.mod" >&2
  exit 1
fi
out="$root/bin/ocm/$version"

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

mkdir -p "$out"
for b in "${want[@]}"; do
  [[ -x "$out/$b" ]] && continue
  echo ">> building $b ($version) from Go modules; this takes a few minutes, once" >&2
  start=$SECONDS
  (cd "$tools" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out/$b.tmp" "$module/cmd/$b")
  mv "$out/$b.tmp" "$out/$b"
  echo ">> built $b in $((SECONDS - start))s" >&2
done
echo "$out"
