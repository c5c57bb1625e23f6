// Package recovery tests that a workload under release stays correct and
// finishable whatever happens around sluice: sluice killed hard (SIGKILL)
// in the middle of a batch and the workload recovered by hand with plain
// kubectl, as docs/recovery.md says; a new pod template written between
// sluice's read and its write; a GitOps tool owning the workload's fields
// by server-side apply after sluice handed it back. sluice runs here as a
// separate process of the real binary, so a kill is a kill; the binary is
// built with the tag sluicetest, so a test can have it block at a named
// kill point (internal/killpoint) and kill it exactly there.
package recovery

import (
	"context"
	"fmt"
	"os"
	"os/exec"
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
	kubectl    string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sluice-recovery-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := cluster.Main(m, cluster.Options{}, func(c *cluster.Cluster) error {
		suite.cfg, suite.kubeconfig = c.RESTConfig(), c.KubeconfigPath()
		var err error
		if suite.binary, err = managerproc.Build(dir, "sluicetest"); err != nil {
			return err
		}
		kubectl, err := findKubectl(c)
		if err != nil {
			return err
		}
		suite.kubectl = kubectl
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

// findKubectl finds the kubectl the documented recovery runs.
func findKubectl(*cluster.Cluster) (string, error) {
	p, err := exec.LookPath("kubectl")
	if err != nil {
		return "", fmt.Errorf("the recovery tests run the documented kubectl commands: install kubectl on PATH (https://kubernetes.io/docs/tasks/tools/): %w", err)
	}
	return p, nil
}
