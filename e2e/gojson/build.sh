#!/usr/bin/env bash
# Builds e2e/gojson (the Go side of `make gojson-diff`) into target/gojson/bin/
# (or $GOJSON_BIN_DIR), from the modules pinned by this directory's go.mod and
# go.sum; skipped when built from the same inputs and Go version (../go-build.sh).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${GOJSON_BIN_DIR:-$root/target/gojson/bin}"
. "$here/../go-build.sh"

stamp="$out/.build-stamp"
inputs=(go.mod go.sum main.go build.sh ../go-build.sh)
binaries=(gojson)
what="gojson"
be=is
skip_if_up_to_date

start_build "gojson"
(cd "$here" && CGO_ENABLED=0 "$GO" build -trimpath -o "$out/" .)
finish_build
