#!/usr/bin/env bash
# Builds kube-apiserver, etcd (and, on request, kube-controller-manager and kube-scheduler) from Go modules
# into bin/kube/<version>/ and prints that directory. The build happens once; later calls reuse the cache.
#
#   hack/kube-binaries.sh                 # envtest's pair: kube-apiserver and etcd
#   hack/kube-binaries.sh --all           # also kube-controller-manager and kube-scheduler (e2e spokes)
#
# A KUBEBUILDER_ASSETS that already holds kube-apiserver and etcd wins, unless --all needs more.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/hack/tools/kube"
version=$(awk '$1=="k8s.io/kubernetes" && $2 ~ /^v/ {print $2}' "$tools/go.mod" | head -1)
out="$root/bin/kube/$version"

want=(kube-apiserver etcd)
if [[ "${1:-}" == "--all" ]]; then
  want+=(kube-controller-manager kube-scheduler)
fi

have_all() {
  local dir=$1 b
  for b in "${want[@]}"; do [[ -x "$dir/$b" ]] || return 1; done
}

if [[ -n "${KUBEBUILDER_ASSETS:-}" ]] && have_all "$KUBEBUILDER_ASSETS"; then
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

mkdir -p "$out"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$version" | cut -d. -f2)"
for b in "${want[@]}"; do
  [[ -x "$out/$b" ]] && continue
  case "$b" in
    etcd) pkg=./etcd ;;
    *) pkg="k8s.io/kubernetes/cmd/$b" ;;
  esac
  echo ">> building $b ($version) from Go modules; this takes a few minutes, once" >&2
  start=$SECONDS
  (cd "$tools" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/$b.tmp" "$pkg")
  mv "$out/$b.tmp" "$out/$b"
  echo ">> built $b in $((SECONDS - start))s" >&2
done
echo "$out"
