// Command cainjector runs cert-manager's CA injector out of cluster for
// e2e/certs_e2e.py: it writes the caBundle of Validating- and
// MutatingWebhookConfigurations annotated cert-manager.io/inject-ca-from
// (or inject-ca-from-secret). A small main over the library's
// RegisterAllInjectors, as cert-manager's own cmd/cainjector (a module the
// Go module proxy does not serve) does: no leader election, no metrics or
// health servers, APIService and CRD injection off.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	"github.com/cert-manager/cert-manager/pkg/util"
)

func main() {
	// controller-runtime registers --kubeconfig itself (and reads KUBECONFIG).
	klog.InitFlags(nil)
	flag.Parse()
	ctrl.SetLogger(klog.NewKlogr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "cert-manager cainjector:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	// The injector's field manager is taken from the user agent
	// ("cert-manager-cainjector"), as in cert-manager's own cainjector.
	cfg = util.RestConfigWithUserAgent(cfg, "cainjector")
	scheme := runtime.NewScheme()
	utilruntime.Must(kscheme.AddToScheme(scheme))
	utilruntime.Must(cmscheme.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		LeaderElection:         false,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Secrets are watched by metadata only; their data is read from
		// the API server, as cert-manager's cainjector does.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	})
	if err != nil {
		return err
	}
	err = cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			"validatingwebhookconfiguration": true,
			"mutatingwebhookconfiguration":   true,
		},
	})
	if err != nil {
		return err
	}
	klog.InfoS("cainjector started")
	return mgr.Start(ctx)
}
