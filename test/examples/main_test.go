// Package examples applies every example under examples/ to the local
// control plane and releases it the way its README says, checking that it
// reaches the state the README documents, so that the examples never rot.
package examples

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/env"
)

// suite is what the examples share: one control plane, one sluice.
var suite struct {
	cfg    *rest.Config
	c      client.Client
	scheme *runtime.Scheme
}

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{}, func(c *cluster.Cluster) error {
		ctx := context.Background()
		suite.cfg = c.RESTConfig()
		if err := env.InstallCRDs(ctx, suite.cfg); err != nil {
			return err
		}
		var err error
		if suite.scheme, err = scheme(); err != nil {
			return err
		}
		if suite.c, err = client.New(suite.cfg, client.Options{Scheme: suite.scheme}); err != nil {
			return err
		}
		if err := installGatewayAPI(ctx); err != nil {
			return err
		}
		_, err = env.StartManager(ctx, suite.cfg, env.ManagerOptions{Name: "sluice-examples"})
		return err
	}))
}

// scheme knows sluice's kinds, the built-in ones, CRDs and the Gateway API.
func scheme() (*runtime.Scheme, error) {
	s, err := app.Scheme()
	if err != nil {
		return nil, err
	}
	for _, add := range []func(*runtime.Scheme) error{apiextensionsv1.AddToScheme, gatewayv1.Install} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// installGatewayAPI installs the Gateway API's HTTPRoute CRD from the
// sigs.k8s.io/gateway-api module sluice is built with: on a real cluster
// the Gateway implementation installs it.
func installGatewayAPI(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		return fmt.Errorf("locating the gateway-api module: %w", err)
	}
	file := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", "gateway.networking.k8s.io_httproutes.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	return applyCRDs(ctx, data)
}
