#!/usr/bin/env bash
# Builds kubectl-pmw for every platform of the krew manifest into reproducible archives (bin/krew/
# kubectl-pmw_<version>_<os>_<arch>.tar.gz, each holding the binary and LICENSE) and writes bin/krew/pmw.yaml:
# plugins/krew/pmw.yaml with the version, the download folder and every archive's sha256 filled in. It fails
# when a placeholder is left. `make krew-manifest` runs it.
#
#   hack/krew-manifest.sh VERSION [BASE_URL]
#   (BASE_URL defaults to the GitHub release of VERSION)
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:?usage: $0 VERSION [BASE_URL]}
base_url=${2:-https://github.com/open-cluster-management-io/placement-manifestwork/releases/download/$version}
module=$(go list -m)
platforms=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64)
out=bin/krew
rm -rf "$out" && mkdir -p "$out"

# The template's leading comment is about the template; the manifest starts at apiVersion.
manifest=$(sed -e '1,/^apiVersion:/{/^#/d}' -e "s|{{VERSION}}|$version|g" -e "s|{{BASE_URL}}|$base_url|g" plugins/krew/pmw.yaml)
for p in "${platforms[@]}"; do
  os=${p%/*} arch=${p#*/}
  bin=kubectl-pmw
  [[ $os == windows ]] && bin=kubectl-pmw.exe
  stage="$out/stage-${os}_$arch"
  mkdir -p "$stage"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
    -ldflags "-s -w -X $module/internal/kubectlpmw.version=$version" -o "$stage/$bin" ./cmd/kubectl-pmw
  cp LICENSE "$stage/LICENSE"
  archive="$out/kubectl-pmw_${version}_${os}_$arch.tar.gz"
  # The same sources give the same bytes: fixed order, owners and times, and no gzip timestamp.
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$stage" -cf - "$bin" LICENSE | gzip -n >"$archive"
  rm -rf "$stage"
  sum=$(sha256sum "$archive" | cut -d' ' -f1)
  manifest=${manifest//"{{SHA256_${os}_$arch}}"/$sum}
  echo ">> $archive $sum" >&2
done
if grep -n '{{' <<<"$manifest" >&2; then
  echo "krew-manifest: plugins/krew/pmw.yaml has placeholders this script does not fill (above)" >&2
  exit 1
fi
echo "$manifest" >"$out/pmw.yaml"
echo "$out/pmw.yaml"
