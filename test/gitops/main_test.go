// Package gitops holds the end-to-end user stories of sluice's GitOps
// adapter on the local control plane: a real Git repository served over
// smart HTTP (test/gitserver), a fake GitHub validated against GitHub's
// OpenAPI description (test/githubfake), and real Flux (test/flux): one
// source-controller and one kustomize-controller for the package, each
// story with its own namespace, GitRepository and Kustomization. A merge is
// a push to the Git server; the release starts when Flux applies it, and
// Flux applies the branch head again every few seconds, correcting drift.
// Argo CD is simulated (test/argocdsim), its Application CRD the real one.
package gitops

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/argocdsim"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/env"
	"github.com/sluice-dev/sluice/test/flux"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// suite is what the stories share: one control plane, one sluice, one Git
// server.
var suite struct {
	cfg *rest.Config
	c   client.Client
	git *gitserver.Server
	// flux runs Flux's controllers against the control plane.
	flux *flux.Flux
	// hookURL is sluice's GitHub webhook endpoint.
	hookURL string
	// kubeconfig is the control plane's, for sluice run as a process.
	kubeconfig string
	// stopManager stops the in-process sluice and waits until it is gone.
	stopManager func()
}

func TestMain(m *testing.M) {
	code := cluster.Main(m, cluster.Options{}, func(c *cluster.Cluster) error {
		ctx := context.Background()
		suite.cfg, suite.kubeconfig = c.RESTConfig(), c.KubeconfigPath()
		if err := env.InstallCRDs(ctx, suite.cfg); err != nil {
			return err
		}
		scheme, err := app.Scheme()
		if err != nil {
			return err
		}
		if err := apiextensionsv1.AddToScheme(scheme); err != nil {
			return err
		}
		if suite.c, err = client.New(suite.cfg, client.Options{Scheme: scheme}); err != nil {
			return err
		}
		if err := argocdsim.InstallCRD(ctx, suite.c); err != nil {
			return err
		}
		if suite.git, err = gitserver.Start(gitserver.Options{}); err != nil {
			return err
		}
		if suite.flux, err = flux.StartForTests(ctx, c.KubeconfigPath(), "sluice-gitops-flux-"); err != nil {
			return err
		}
		return startManager(ctx)
	})
	os.Exit(suite.flux.Finish(code))
}

// startManager runs sluice in-process (env.StartManager), allowed to read
// Git over plain HTTP, with its webhook receivers on a free port.
func startManager(ctx context.Context) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hookAddr := l.Addr().String()
	_ = l.Close()
	suite.hookURL = "http://" + hookAddr + app.GitHubWebhookPath
	m, err := env.StartManager(ctx, suite.cfg, env.ManagerOptions{Name: "sluice-gitops-e2e", Logger: testLogger(),
		GitAllowInsecureHTTP: true, GitHubWebhookAddr: hookAddr})
	if err != nil {
		return err
	}
	suite.stopManager = func() { _ = m.Stop() }
	return nil
}

// testLogger logs the manager to stderr when SLUICE_TEST_LOG is set.
func testLogger() logr.Logger {
	if os.Getenv("SLUICE_TEST_LOG") == "" {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
}
