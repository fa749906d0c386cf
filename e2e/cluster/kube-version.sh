# Sourced by build.sh and controller-manager/build.sh: the Kubernetes release
# both build, and the -ldflags that set its version strings as Kubernetes'
# hack/lib/version.sh sets them (so `kubectl version` says v1.36.3).
KUBE_VERSION=v1.36.3
# The release's date (the Go module proxy's time for k8s.io/kubernetes
# v1.36.3), so that the same inputs give the same binaries.
BUILD_DATE=2026-07-22T18:07:38Z

major="${KUBE_VERSION#v}"; major="${major%%.*}"
minor="${KUBE_VERSION#v*.}"; minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
  ldflags+=" -X '$pkg.gitVersion=$KUBE_VERSION'"
  ldflags+=" -X '$pkg.gitMajor=$major' -X '$pkg.gitMinor=$minor'"
  ldflags+=" -X '$pkg.buildDate=$BUILD_DATE'"
  # The module proxy does not tell the release's commit: leave it empty
  # rather than the source's "$Format:%H$" placeholder.
  ldflags+=" -X '$pkg.gitCommit=' -X '$pkg.gitTreeState=clean'"
done
