//go:build tools

// The program build.sh builds, so that `go mod tidy` keeps its
// dependencies in go.mod and go.sum.
package tools

import (
	_ "github.com/sigstore/cosign/v2/cmd/cosign"
)
