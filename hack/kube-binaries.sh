#!/usr/bin/env bash
# Builds kube-apiserver, etcd (and, on request, kube-controller-manager, kube-scheduler and kubectl) from Go modules
# into bin/kube/<version>/ and prints that directory. The build happens once; later calls reuse the cache. The
# version is the one of k8s.io/kubernetes pinned in hack/tools/kube/go.mod.
#
#   hack/kube-binaries.sh                 # envtest's pair: kube-apiserver and etcd
#   hack/kube-binaries.sh --all           # also kube-controller-manager and kube-scheduler (e2e spokes) and
#                                         # kubectl (the e2e's transparent-mode spec runs it)
#
# A KUBEBUILDER_ASSETS that already holds kube-apiserver and etcd wins, unless --all needs more.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

tool_init kube k8s.io/kubernetes

want=(kube-apiserver etcd)
if [[ "${1:-}" == "--all" ]]; then
  want+=(kube-controller-manager kube-scheduler kubectl)
fi

have_all() {
  local dir=$1 b
  for b in "${want[@]}"; do [[ -x "$dir/$b" ]] || return 1; done
}

if [[ -n "${KUBEBUILDER_ASSETS:-}" ]] && have_all "$KUBEBUILDER_ASSETS"; then
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$version" | cut -d. -f2)"
for b in "${want[@]}"; do
  case "$b" in
    etcd) pkg=./etcd ;;   # hack/tools/kube/etcd: etcd's server main, built against the pinned go.etcd.io modules
    *) pkg="$module/cmd/$b" ;;
  esac
  build_once "$b" "$pkg" -ldflags "$ldflags"
done
echo "$out"
