//go:build tools

// The program build.sh builds, so that `go mod tidy` keeps its dependencies
// in go.mod and go.sum.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
