#!/usr/bin/env bash
# Builds the helm CLI (helm.sh/helm/v3/cmd/helm) from Go modules into bin/helm/<version>/helm and prints that
# directory. The build happens once; later calls reuse the cache. The version is the one of helm.sh/helm/v3
# pinned in hack/tools/helm/go.mod. test/deploy and `make chart-lint` run it.
#
#   hack/helm-binary.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/hack/tools/helm"
module=helm.sh/helm/v3
# Matches both `require helm.sh/helm/v3 vX` and the module's line inside a require block.
version=$(awk -v m="$module" '$1 != "replace" { for (i = 1; i < NF; i++) if ($i == m && $(i+1) ~ /^v/) { print $(i+1); exit } }' "$tools/go.mod")
if [[ -z "$version" ]]; then
  echo "helm-binary: no version of $module in $tools/go.mod" >&2
  exit 1
fi
out="$root/bin/helm/$version"

if [[ ! -x "$out/helm" ]]; then
  mkdir -p "$out"
  # Stamped as helm's own Makefile does: the version `helm version` prints, and the Kubernetes version that
  # `helm template` and `helm lint` assume (.Capabilities.KubeVersion) taken from the k8s.io modules helm
  # builds against, instead of the v1.20 compiled in.
  k8s=$(cd "$tools" && go list -m -f '{{.Version}}' k8s.io/client-go)   # v0.35.1 -> Kubernetes 1.35
  k8s_minor=$(echo "$k8s" | cut -d. -f2)
  ldflags="-s -w -X $module/internal/version.version=$version -X $module/internal/version.gitTreeState=clean"
  ldflags+=" -X $module/pkg/lint/rules.k8sVersionMajor=1 -X $module/pkg/lint/rules.k8sVersionMinor=$k8s_minor"
  ldflags+=" -X $module/pkg/chartutil.k8sVersionMajor=1 -X $module/pkg/chartutil.k8sVersionMinor=$k8s_minor"
  echo ">> building helm ($version) from Go modules; this takes a few minutes, once" >&2
  start=$SECONDS
  (cd "$tools" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out/helm.tmp" "$module/cmd/helm")
  mv "$out/helm.tmp" "$out/helm"
  echo ">> built helm in $((SECONDS - start))s" >&2
fi
echo "$out"
