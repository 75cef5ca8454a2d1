#!/usr/bin/env bash
# Builds kwok (sigs.k8s.io/kwok/cmd/kwok: fake Nodes and Pods for the e2e spokes) from Go modules into
# bin/kwok/<version>/kwok and prints that directory. The build happens once; later calls reuse the cache. The
# version is the one of sigs.k8s.io/kwok pinned in hack/tools/kwok/go.mod.
#
# Next to the binary it writes stages.yaml, kwok's "fast" stages of that version (what kwokctl configures):
# since v0.8 the kwok binary has no built-in stages and exits with "no stages found" without a config.
# Run kwok with --config=<dir>/stages.yaml.
#
#   hack/kwok-binary.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/hack/tools/kwok"
module=sigs.k8s.io/kwok
# Matches both `require sigs.k8s.io/kwok vX` and the module's line inside a require block.
version=$(awk -v m="$module" '$1 != "replace" { for (i = 1; i < NF; i++) if ($i == m && $(i+1) ~ /^v/) { print $(i+1); exit } }' "$tools/go.mod")
if [[ -z "$version" ]]; then
  echo "kwok-binary: no version of $module in $tools/go.mod" >&2
  exit 1
fi
out="$root/bin/kwok/$version"

if [[ ! -x "$out/kwok" ]]; then
  mkdir -p "$out"
  echo ">> building kwok ($version) from Go modules; this takes a few minutes, once" >&2
  start=$SECONDS
  # Stamped as kwok's own release build does, so `kwok --version` names the pinned release.
  (cd "$tools" && CGO_ENABLED=0 go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X $module/pkg/consts.Version=${version#v}" -o "$out/kwok.tmp" "$module/cmd/kwok")
  mv "$out/kwok.tmp" "$out/kwok"
  echo ">> built kwok in $((SECONDS - start))s" >&2
fi

if [[ ! -s "$out/stages.yaml" ]]; then
  src=$(cd "$tools" && go list -m -f '{{.Dir}}' "$module")
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    echo "---"
    cat "$src/kustomize/stage/$f"
  done >"$out/stages.yaml.tmp"
  mv "$out/stages.yaml.tmp" "$out/stages.yaml"
fi
echo "$out"
