// Distribution's registry (github.com/distribution/distribution/v3, the
// registry behind Docker Hub and CNCF's reference implementation), as its
// cmd/registry builds it but with only the storage drivers `make e2e-oci`
// uses (filesystem, inmemory) and no auth: its cmd/registry also links the
// Azure, GCS and S3 drivers, which would triple the build. Run as
// `registry serve <config.yml>`.
package main

import (
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

func main() {
	// RootCmd exits non-zero itself when its command fails.
	_ = registry.RootCmd.Execute()
}
