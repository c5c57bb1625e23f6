//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/env"
	"github.com/sluice-dev/sluice/test/managerproc"
)

// suite is what the tests share.
var suite struct {
	cluster    *cluster.Cluster
	cfg        *rest.Config
	kubeconfig string
	c          client.Client
	binary     string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sluice-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := cluster.Main(m, cluster.Options{Nodes: 4}, func(c *cluster.Cluster) error {
		suite.cluster, suite.cfg, suite.kubeconfig = c, c.RESTConfig(), c.KubeconfigPath()
		var err error
		if suite.binary, err = managerproc.Build(dir); err != nil {
			return err
		}
		ctx := context.Background()
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
		return installHTTPRouteCRD(ctx)
	})
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// installHTTPRouteCRD installs Gateway API's HTTPRoute CRD from the
// gateway-api module sluice builds with.
func installHTTPRouteCRD(ctx context.Context) error {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		return fmt.Errorf("locating the gateway-api module (go list -m sigs.k8s.io/gateway-api): %w", err)
	}
	raw, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", "gateway.networking.k8s.io_httproutes.yaml"))
	if err != nil {
		return err
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &crd.Object); err != nil {
		return err
	}
	if err := suite.c.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the HTTPRoute CRD: %w", err)
	}
	return nil
}
