#!/usr/bin/env bash
# Builds cosign (v2.6.5, from the module pinned by this directory's go.mod
# and go.sum) into target/oci/cosign-bin/ (or $COSIGN_BIN_DIR), for the
# signature part of `make e2e-oci`. Local only (`make cosign-bin`): the
# build takes minutes, so CI skips that part. Niced, and stopped after
# COSIGN_BUILD_TIMEOUT seconds (1200).
#
# Skips the build when the binary was built from the same go.mod, go.sum,
# build scripts and Go version (../../go-build.sh).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="${COSIGN_BIN_DIR:-$root/target/oci/cosign-bin}"
. "$here/../../go-build.sh"

stamp="$out/.build-stamp"
inputs=(go.mod go.sum build.sh ../../go-build.sh)
binaries=(cosign)
what="cosign"
be=is
skip_if_up_to_date

start_build "cosign"
(cd "$here" && CGO_ENABLED=0 nice -n 19 timeout "${COSIGN_BUILD_TIMEOUT:-1200}" "$GO" build -trimpath \
  -ldflags "-s -w -X sigs.k8s.io/release-utils/version.gitVersion=v2.6.5" -o "$out/" \
  github.com/sigstore/cosign/v2/cmd/cosign)
finish_build
