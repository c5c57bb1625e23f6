// Package daemonset holds sluice's end-to-end scenarios for native
// DaemonSets, on a local control plane of 6 fake nodes (one DaemonSet pod
// each), each written as Given / When / Then.
package daemonset

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

// nodes is the number of fake nodes, so the number of pods of a DaemonSet.
const nodes = 6

// suite is what the scenarios share: one control plane, one sluice.
var suite struct {
	cfg     *rest.Config
	c       client.Client
	manager *env.Manager
}

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{Nodes: nodes}, func(c *cluster.Cluster) error {
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
		suite.manager, err = startManager(ctx)
		return err
	}))
}

// startManager runs sluice for the scenarios.
func startManager(ctx context.Context) (*env.Manager, error) {
	m, err := env.StartManager(ctx, suite.cfg, env.ManagerOptions{Name: "sluice-e2e-daemonset", Logger: testLogger()})
	if err != nil {
		return nil, fmt.Errorf("starting sluice: %w", err)
	}
	return m, nil
}
