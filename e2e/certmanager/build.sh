#!/usr/bin/env bash
# Builds cert-manager's controller and cainjector (v1.21.2, from the module
# pinned by this directory's go.mod and go.sum) into target/certmanager/bin/
# (or $CERTMANAGER_BIN_DIR), for e2e/certs_e2e.py.
#
# cert-manager's own main packages (cmd/controller, cmd/cainjector) are
# separate modules that the Go module proxy does not serve: ./controller and
# ./cainjector are small mains over the library (see their doc comments).
# Skips the build when the binaries were built from the same go.mod, go.sum,
# sources, build scripts and Go version (../go-build.sh).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${CERTMANAGER_BIN_DIR:-$root/target/certmanager/bin}"
. "$here/../go-build.sh"

stamp="$out/.build-stamp"
inputs=(go.mod go.sum build.sh ../go-build.sh controller/main.go cainjector/main.go)
binaries=(cert-manager-controller cert-manager-cainjector)
what="cert-manager binaries"
skip_if_up_to_date

start_build "cert-manager controller and cainjector"
for binary in controller cainjector; do
  (cd "$here" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" -o "$out/cert-manager-$binary" "./$binary")
done
finish_build
