package notification_test

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
	"github.com/sluice-dev/sluice/test/poll"
)

// suite is what the stories share: one control plane, one sluice.
var suite struct {
	cfg *rest.Config
	c   client.Client
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
		if _, err := env.StartManager(ctx, suite.cfg, env.ManagerOptions{Name: "sluice-notification", Logger: poll.Logger()}); err != nil {
			return fmt.Errorf("starting sluice: %w", err)
		}
		return nil
	}))
}
