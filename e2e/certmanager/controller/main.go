// Command controller runs cert-manager's certificate controllers out of
// cluster for e2e/certs_e2e.py: the Certificate life cycle (trigger, key
// manager, request manager, issuing, readiness, revision manager), the
// approver, the SelfSigned and CA issuers and their CertificateRequest
// controllers. cert-manager publishes its own main package
// (cmd/controller) as a separate module that the Go module proxy does not
// serve, so this is a small main over the library's registered
// controllers: no ACME, Vault, Venafi, ingress or Gateway shims, no leader
// election, no metrics or health servers.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"

	// Each package registers its controller (or issuer) in init().
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the API server")
	clusterNS := flag.String("cluster-resource-namespace", "cert-manager",
		"namespace of the Secrets that ClusterIssuers read")
	workers := flag.Int("workers", 2, "workers per controller")
	klog.InitFlags(nil)
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *clusterNS, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "cert-manager controller:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, clusterNS string, workers int) error {
	factory, err := controllerpkg.NewContextFactory(ctx, controllerpkg.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   50,
		KubernetesAPIBurst: 100,
		IssuerOptions:      controllerpkg.IssuerOptions{ClusterResourceNamespace: clusterNS},
		CertificateOptions: controllerpkg.CertificateOptions{
			// cert-manager's own defaults (its --certificate-request-*-backoff-duration flags).
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	})
	if err != nil {
		return err
	}
	names := make([]string, 0, len(controllerpkg.Known()))
	for name := range controllerpkg.Known() {
		names = append(names, name)
	}
	sort.Strings(names)
	errs := make(chan error, len(names))
	for _, name := range names {
		c, err := controllerpkg.Known()[name](factory)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		klog.InfoS("starting controller", "name", name)
		go func(name string, c controllerpkg.Interface) {
			if err := c.Run(workers, ctx); err != nil {
				errs <- fmt.Errorf("controller %s: %w", name, err)
			}
		}(name, c)
	}
	// The informers the controllers asked for are created by now; Build
	// hands out the factories they share.
	shared, err := factory.Build()
	if err != nil {
		return err
	}
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	klog.InfoS("controllers started", "count", len(names))
	select {
	case <-ctx.Done():
		return nil
	case err := <-errs:
		return err
	}
}
