//go:build tools

// The module whose deploy/crds e2e/certs_e2e.py reads in GOMODCACHE (`go
// list -m -json github.com/cert-manager/cert-manager` in this folder names
// its Dir); ./controller and ./cainjector import it too.
package tools

import (
	_ "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
)
