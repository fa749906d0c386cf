//go:build tools

// cert-manager's CRDs (deploy/crds) are read from this module's copy in
// GOMODCACHE by e2e/certs_e2e.py; this import keeps the module in go.mod.
package tools

import (
	_ "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
)
