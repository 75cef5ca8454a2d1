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
source "$(dirname "$0")/lib.sh"

tool_init kwok sigs.k8s.io/kwok

# Stamped as kwok's own release build does, so `kwok --version` names the pinned release.
build_once kwok "$module/cmd/kwok" -ldflags "-s -w -X $module/pkg/consts.Version=${version#v}"

stages() {
  local src f
  src=$(cd "$tools" && go list -m -f '{{.Dir}}' "$module")
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    echo "---"
    cat "$src/kustomize/stage/$f"
  done
}
write_once "$out/stages.yaml" stages
echo "$out"
