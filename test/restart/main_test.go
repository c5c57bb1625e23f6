// Package restart tests that releases survive sluice being killed hard
// (SIGKILL) at every kind of state transition, and that a standby replica
// takes over when the leader dies. sluice runs here as separate processes
// of the real binary, so a kill is a kill.
package restart

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/env"
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
		suite.binary = filepath.Join(dir, "sluice")
		build := exec.Command("go", "build", "-o", suite.binary, "github.com/sluice-dev/sluice/cmd/sluice")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("building sluice: %v\n%s", err, out)
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
