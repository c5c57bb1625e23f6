// Package hpa tests releases under the real HorizontalPodAutoscaler of
// kube-controller-manager, fed by a test metrics API server
// (test/metricsapi) registered with the aggregation layer of the local
// control plane.
package hpa

import (
	"context"
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/env"
	"github.com/sluice-dev/sluice/test/metricsapi"
	"github.com/sluice-dev/sluice/test/poll"
)

var suite struct {
	cfg *rest.Config
	c   client.Client
}

// startMetrics serves the metrics API for the test, until it ends (before
// the control plane stops, which would otherwise wait on its connections).
func startMetrics(t *testing.T) *metricsapi.Server {
	t.Helper()
	s, err := metricsapi.Start(poll.Context(t), suite.c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
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
		_, err = env.StartManager(ctx, suite.cfg, env.ManagerOptions{Name: "sluice-hpa", Logger: poll.Logger()})
		return err
	}))
}
