#!/usr/bin/env bash
# Builds golangci-lint (github.com/golangci/golangci-lint/v2/cmd/golangci-lint) from Go modules into
# bin/golangci-lint/<version>/golangci-lint and prints that directory. The build happens once (about 4 minutes
# on two cores); later calls reuse the cache. The version is the one pinned in hack/tools/golangci-lint/go.mod.
# hack/verify.sh (`make verify`) runs it with .golangci.yml.
#
#   hack/golangci-lint.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

tool_init golangci-lint github.com/golangci/golangci-lint/v2

# Stamped as golangci-lint's own release build does, so `golangci-lint version` names the pinned release.
build_once golangci-lint "$module/cmd/golangci-lint" -ldflags "-s -w -X main.version=${version#v}"
echo "$out"
