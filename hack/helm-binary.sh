#!/usr/bin/env bash
# Builds the helm CLI (helm.sh/helm/v3/cmd/helm) from Go modules into bin/helm/<version>/helm and prints that
# directory. The build happens once; later calls reuse the cache. The version is the one of helm.sh/helm/v3
# pinned in hack/tools/helm/go.mod. test/deploy and `make chart-lint` run it.
#
#   hack/helm-binary.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

tool_init helm helm.sh/helm/v3

if [[ ! -x "$out/helm" ]]; then
  # Stamped as helm's own Makefile does: the version `helm version` prints, and the Kubernetes version that
  # `helm template` and `helm lint` assume (.Capabilities.KubeVersion) taken from the k8s.io modules helm
  # builds against, instead of the v1.20 compiled in.
  k8s=$(cd "$tools" && go list -m -f '{{.Version}}' k8s.io/client-go)   # v0.35.1 -> Kubernetes 1.35
  k8s_minor=$(echo "$k8s" | cut -d. -f2)
  ldflags="-s -w -X $module/internal/version.version=$version -X $module/internal/version.gitTreeState=clean"
  ldflags+=" -X $module/pkg/lint/rules.k8sVersionMajor=1 -X $module/pkg/lint/rules.k8sVersionMinor=$k8s_minor"
  ldflags+=" -X $module/pkg/chartutil.k8sVersionMajor=1 -X $module/pkg/chartutil.k8sVersionMinor=$k8s_minor"
  build_once helm "$module/cmd/helm" -ldflags "$ldflags"
fi
echo "$out"
