# shellcheck shell=bash
# Sourced by the scripts that build tools from Go modules (kube-binaries.sh, ocm-binaries.sh, helm-binary.sh,
# kwok-binary.sh, golangci-lint.sh). Each tool is pinned in its own module, hack/tools/<tool>/go.mod, and built
# once into bin/<tool>/<version>/; a script prints that directory on stdout (callers parse it) and its progress
# on stderr.
#
#   source "$(dirname "$0")/lib.sh"
#   tool_init helm helm.sh/helm/v3                        # sets root, tools, module, version, out
#   build_once helm "$module/cmd/helm" -ldflags "-s -w"   # go build into $out/helm unless it is there
#   echo "$out"

# root is the repository's top directory.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# lib_name is the calling script's name without .sh, the prefix of its error messages.
lib_name=$(basename "$0" .sh)

# module_version GOMOD MODULE prints the version of MODULE that GOMOD requires (nothing when it requires none).
# It matches both `require MODULE vX` and MODULE's line inside a require block, never a replace directive.
module_version() {
  awk -v m="$2" '($1 == m && $2 ~ /^v/) || ($1 == "require" && $2 == m && $3 ~ /^v/) {
    print ($1 == m ? $2 : $3); exit }' "$1"
}

# tool_init TOOL MODULE sets tools (hack/tools/TOOL, the module that pins it), module (MODULE), version (the
# version of MODULE pinned there) and out (bin/TOOL/<version>, where the binaries go).
tool_init() {
  tools="$root/hack/tools/$1"
  module=$2
  version=$(module_version "$tools/go.mod" "$module")
  if [[ -z "$version" ]]; then
    echo "$lib_name: no version of $module in $tools/go.mod" >&2
    exit 1
  fi
  out="$root/bin/$1/$version"
}

# build_once BINARY PACKAGE [go build flags...] builds PACKAGE with the tools module's dependencies into
# $out/BINARY, unless an executable is already there. It builds to BINARY.tmp and renames, so an interrupted
# build never leaves a binary that looks done.
build_once() {
  local bin=$1 pkg=$2 start
  shift 2
  [[ -x "$out/$bin" ]] && return 0
  mkdir -p "$out"
  echo ">> building $bin ($version) from Go modules; this takes a few minutes, once" >&2
  start=$SECONDS
  (cd "$tools" && CGO_ENABLED=0 go build -trimpath -buildvcs=false "$@" -o "$out/$bin.tmp" "$pkg")
  mv "$out/$bin.tmp" "$out/$bin"
  echo ">> built $bin in $((SECONDS - start))s" >&2
}

# write_once FILE COMMAND [ARGS...] writes COMMAND's stdout to FILE, unless FILE is already there and not empty,
# through FILE.tmp as build_once does.
write_once() {
  local file=$1
  shift
  [[ -s "$file" ]] && return 0
  mkdir -p "$(dirname "$file")"
  "$@" >"$file.tmp"
  mv "$file.tmp" "$file"
}
