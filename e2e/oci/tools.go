//go:build tools

// The programs build.sh builds, so that `go mod tidy` keeps their
// dependencies in go.mod and go.sum (./registry imports Distribution).
package tools

import (
	_ "oras.land/oras/cmd/oras"
)
