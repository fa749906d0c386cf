#!/usr/bin/env bash
# The release workflow's version checks (.github/workflows/release.yml).
#
#   scripts/release-version.sh REF       REF: refs/tags/vX.Y.Z or a branch
#     prints `version=…` and `oci-tag=…` for $GITHUB_OUTPUT. For a tag, fails
#     unless the tag, Cargo.toml's version and metadata.yml's
#     io.kubewarden.policy.version agree; a branch publishes `latest`.
#   scripts/release-version.sh --notes X.Y.Z
#     prints CHANGELOG.md's section for X.Y.Z (the release notes); fails if
#     there is none or it still says unreleased.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = --notes ]; then
  version=${2:?usage: release-version.sh --notes X.Y.Z}
  notes=$(awk -v v="$version" '
    /^## / { if (found) exit; if ($2 == v) { found = 1; heading = $0; next } }
    found { print }
    END { if (!found) exit 1; if (heading ~ /unreleased/) exit 2 }' CHANGELOG.md) || {
    echo "release-version: CHANGELOG.md has no released section for $version" >&2; exit 1; }
  printf '%s\n' "$notes"
  exit 0
fi

ref=${1:?usage: release-version.sh REF | --notes X.Y.Z}
cargo=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
meta=$(sed -n 's/^  io.kubewarden.policy.version: //p' metadata.yml)
[ "$cargo" = "$meta" ] || { echo "release-version: Cargo.toml says $cargo, metadata.yml $meta" >&2; exit 1; }
case $ref in
  refs/tags/v*)
    tag=${ref#refs/tags/}
    [ "$tag" = "v$meta" ] || { echo "release-version: tag $tag, metadata.yml says $meta" >&2; exit 1; }
    echo "version=$meta"
    echo "oci-tag=$tag"
    ;;
  *)
    echo "version=$meta-$(git rev-parse --short HEAD)"
    echo "oci-tag=latest"
    ;;
esac
