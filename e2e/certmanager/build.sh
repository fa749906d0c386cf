#!/usr/bin/env bash
# Builds cert-manager's controller and cainjector (v1.21.2, from the module
# pinned by this directory's go.mod and go.sum) into target/certmanager/bin/
# (or $CERTMANAGER_BIN_DIR), for e2e/certs_e2e.py.
#
# cert-manager's own main packages (cmd/controller, cmd/cainjector) are
# separate modules that the Go module proxy does not serve: ./controller and
# ./cainjector are small mains over the library (see their doc comments).
# Skips the build when the binaries were built from the same go.mod, go.sum,
# sources, this script and Go version (a stamp file records their hash).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${CERTMANAGER_BIN_DIR:-$root/target/certmanager/bin}"

GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
[ -x "$GO" ] || { echo "build.sh: go not found (PATH or /usr/local/go/bin/go)" >&2; exit 1; }

stamp="$out/.build-stamp"
want="$(cd "$here" && cat go.mod go.sum build.sh controller/main.go cainjector/main.go | sha256sum | cut -d' ' -f1) $("$GO" env GOVERSION)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
  && [ -x "$out/cert-manager-controller" ] && [ -x "$out/cert-manager-cainjector" ]; then
  echo "cert-manager binaries are up to date in $out"
  exit 0
fi

start=$(date +%s)
mkdir -p "$out"
rm -f "$stamp"
echo "building cert-manager controller and cainjector into $out ($("$GO" env GOVERSION), GOCACHE=$("$GO" env GOCACHE))"
(cd "$here" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" -o "$out/cert-manager-controller" ./controller)
(cd "$here" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" -o "$out/cert-manager-cainjector" ./cainjector)
echo "$want" > "$stamp"
echo "cert-manager binaries built in $(( $(date +%s) - start )) s"
