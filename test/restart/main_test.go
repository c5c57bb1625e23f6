// Package restart tests that releases survive sluice being killed hard
// (SIGKILL) at every kind of state transition, and that a standby replica
// takes over when the leader dies. sluice runs here as separate processes
// of the real binary, so a kill is a kill. The binary is built with the
// sluicetest tag: it blocks at the kill points the test names
// (internal/killpoint), so each kill lands exactly at the transition it
// is meant to, never before or after it.
package restart

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
	"github.com/sluice-dev/sluice/test/managerproc"
)

// suite is what the tests share.
var suite struct {
	cfg        *rest.Config
	kubeconfig string
	c          client.WithWatch
	binary     string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sluice-restart-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := cluster.Main(m, cluster.Options{}, func(c *cluster.Cluster) error {
		suite.cfg, suite.kubeconfig = c.RESTConfig(), c.KubeconfigPath()
		// The kill points block only in a binary built with this tag.
		var err error
		if suite.binary, err = managerproc.Build(dir, "sluicetest"); err != nil {
			return err
		}
		if err := env.InstallCRDs(context.Background(), suite.cfg); err != nil {
			return err
		}
		scheme, err := app.Scheme()
		if err != nil {
			return err
		}
		suite.c, err = client.NewWithWatch(suite.cfg, client.Options{Scheme: scheme})
		return err
	})
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
