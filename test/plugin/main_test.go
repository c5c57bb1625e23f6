// Package plugin tests kubectl-sluice, the kubectl plugin, on the local
// control plane with sluice running in-process: each test drives a real
// release with the plugin's commands, run in-process (and once as a binary
// through the real kubectl), and checks their output and the objects.
package plugin

import (
	"context"
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/env"
)

// suite is what the tests share: one control plane, one sluice.
var suite struct {
	cfg        *rest.Config
	c          client.Client
	kubeconfig string // the admin's (user sluice-admin)
}

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{}, func(c *cluster.Cluster) error {
		ctx := context.Background()
		suite.cfg = c.RESTConfig()
		suite.kubeconfig = c.KubeconfigPath()
		if err := env.InstallCRDs(ctx, suite.cfg); err != nil {
			return err
		}
		scheme, err := app.Scheme()
		if err != nil {
			return err
		}
		if suite.c, err = client.New(suite.cfg, client.Options{Scheme: scheme}); err != nil {
			return err
		}
		if _, err := env.StartManager(ctx, suite.cfg, env.ManagerOptions{Name: "sluice-plugin", Logger: testLogger()}); err != nil {
			return fmt.Errorf("starting sluice: %w", err)
		}
		return nil
	}))
}
