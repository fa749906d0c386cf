# Sourced by the build scripts of the Go programs the e2e tests run
# (cluster/build.sh, cluster/controller-manager/build.sh,
# certmanager/build.sh): Go found, and a build skipped when the binaries were
# built from the same inputs and Go version (a stamp file records their hash).
#
# The script sets `here` (its folder), `out` (the binaries' folder), `stamp`,
# `inputs` (files of $here whose hash decides), `binaries` (what must be in
# $out) and `what` (for the messages); then calls skip_if_up_to_date,
# start_build "<what is built>", its `go build` commands, and finish_build.

GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
[ -x "$GO" ] || { echo "build.sh: go not found (PATH or /usr/local/go/bin/go)" >&2; exit 1; }

# Exits 0 when $stamp holds the inputs' hash and every binary is in $out.
skip_if_up_to_date() {
  want="$(cd "$here" && cat "${inputs[@]}" | sha256sum | cut -d' ' -f1) $("$GO" env GOVERSION)"
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] || return 0
  local binary
  for binary in "${binaries[@]}"; do
    [ -x "$out/$binary" ] || return 0
  done
  echo "$what ${be:-are} up to date in $out"
  exit 0
}

start_build() {
  start=$(date +%s)
  mkdir -p "$out"
  rm -f "$stamp"
  echo "building $1 into $out ($("$GO" env GOVERSION), GOCACHE=$("$GO" env GOCACHE))"
}

finish_build() {
  echo "$want" > "$stamp"
  echo "$what built in $(( $(date +%s) - start )) s"
}
