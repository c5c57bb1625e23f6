// Package gitops holds the end-to-end user stories of sluice's GitOps
// adapter on the local control plane: a real Git repository served over
// smart HTTP (test/gitserver), a fake GitHub validated against GitHub's
// OpenAPI description (test/githubfake), and the GitOps tool simulated the
// way Flux's kustomize-controller works: it applies the commit's manifests
// with server-side apply, labels what it applied with
// kustomize.toolkit.fluxcd.io/name and /namespace, and sets the
// Kustomization's status.lastAppliedRevision to "main@sha1:<sha>". Flux's and
// Argo CD's real CRDs are installed from testdata/crds.
package gitops

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/env"
	"github.com/sluice-dev/sluice/test/gitserver"
)

//go:embed testdata/crds/*.yaml
var gitopsCRDs embed.FS

// suite is what the stories share: one control plane, one sluice, one Git
// server.
var suite struct {
	cfg *rest.Config
	c   client.Client
	git *gitserver.Server
	// hookURL is sluice's GitHub webhook endpoint.
	hookURL string
}

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{}, func(c *cluster.Cluster) error {
		ctx := context.Background()
		suite.cfg = c.RESTConfig()
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
		if err := installToolCRDs(ctx); err != nil {
			return err
		}
		if suite.git, err = gitserver.Start(gitserver.Options{}); err != nil {
			return err
		}
		return startManager(ctx)
	}))
}

// installToolCRDs installs Flux's Kustomization and Argo CD's Application
// CRDs, as their projects publish them.
func installToolCRDs(ctx context.Context) error {
	files, err := gitopsCRDs.ReadDir("testdata/crds")
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := gitopsCRDs.ReadFile("testdata/crds/" + f.Name())
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, crd); err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
		if err := suite.c.Create(ctx, crd); err != nil {
			return fmt.Errorf("creating %s: %w", crd.Name, err)
		}
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := suite.c.Get(ctx, client.ObjectKeyFromObject(crd), got); err != nil {
				return false, nil //nolint:nilerr // not there yet
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		}); err != nil {
			return fmt.Errorf("CRD %s not established: %w", crd.Name, err)
		}
	}
	return nil
}

// startManager runs sluice in-process, allowed to read the test Git server
// over plain HTTP.
func startManager(ctx context.Context) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hookAddr := l.Addr().String()
	_ = l.Close()
	suite.hookURL = "http://" + hookAddr + app.GitHubWebhookPath
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- app.Run(context.WithoutCancel(ctx), suite.cfg, app.Options{
			MetricsAddr: "0", ProbeAddr: "0", Local: true, WebhookConfigName: "sluice-gitops-e2e",
			Logger: testLogger(), OnReady: func() { close(ready) }, InProcessRestarts: true,
			ProgressDeadline: 10 * time.Minute, GitAllowInsecureHTTP: true, GitHubWebhookAddr: hookAddr,
		})
	}()
	select {
	case <-ready:
		return nil
	case err := <-done:
		return fmt.Errorf("sluice stopped before it was ready: %w", err)
	case <-time.After(60 * time.Second):
		return errors.New("sluice not ready after 60s")
	}
}

// testLogger logs the manager to stderr when SLUICE_TEST_LOG is set.
func testLogger() logr.Logger {
	if os.Getenv("SLUICE_TEST_LOG") == "" {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
}
