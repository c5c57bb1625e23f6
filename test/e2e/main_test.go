// Package e2e holds sluice's end-to-end scenarios on the local control
// plane, each written as Given / When / Then.
package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/env"
)

// suite is what the scenarios share: one control plane, one sluice.
var suite struct {
	cfg     *rest.Config
	c       client.Client
	kube    kubernetes.Interface
	manager *env.Manager
	// metricsURL is where the running manager serves its metrics.
	metricsURL string
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
		if suite.c, err = client.New(suite.cfg, client.Options{Scheme: scheme}); err != nil {
			return err
		}
		if suite.kube, err = kubernetes.NewForConfig(suite.cfg); err != nil {
			return err
		}
		return startManager(ctx)
	}))
}

// startManager runs sluice for the scenarios.
func startManager(ctx context.Context) error {
	return startManagerWith(ctx, env.ManagerOptions{})
}

// startManagerWith runs sluice for the scenarios with the options o (its
// name, logger and metrics address are the suite's).
func startManagerWith(ctx context.Context, o env.ManagerOptions) error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	o.Name, o.Logger, o.MetricsAddr = "sluice-e2e", testLogger(), addr
	m, err := env.StartManager(ctx, suite.cfg, o)
	if err != nil {
		return fmt.Errorf("starting sluice: %w", err)
	}
	suite.manager, suite.metricsURL = m, "http://"+addr+"/metrics"
	return nil
}
