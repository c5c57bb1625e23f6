// Package dataplane proves sluice's traffic routing on a real data plane:
// a Traefik proxy (built by hack/dataplane) reads the Gateway API objects of
// the local control plane and forwards HTTP requests to the addresses in the
// EndpointSlices Kubernetes builds for the stable and canary Services. Pod
// IPs come from a range this machine treats as local (see podNetwork), and
// the tests serve each pod's address themselves, answering with the pod's
// image, so every response tells which revision the proxy picked.
package dataplane

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

// suite is what the scenarios share: one control plane, one sluice, one
// proxy and the servers standing in for the pods.
var suite struct {
	cfg   *rest.Config
	c     client.Client
	proxy *proxy
}

func TestMain(m *testing.M) {
	if err := ensureLocalPodNetwork(); err != nil {
		// A missing prerequisite fails the package: skipped scenarios
		// would read as passed.
		fmt.Fprintf(os.Stderr, "dataplane: cannot run the data-plane tests: %v\n"+
			"The fake pods' addresses (%s) must be local to this machine. Run the tests as root (CI does), "+
			"or add the route once yourself: sudo ip route add local %s dev lo\n", err, podNetwork, podNetwork)
		os.Exit(1)
	}
	opts := cluster.Options{Nodes: 1, PodNetwork: podNetwork}
	os.Exit(cluster.Main(m, opts, func(c *cluster.Cluster) error {
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
		if err := installGatewayAPI(ctx, suite.c); err != nil {
			return err
		}
		if _, err := env.StartManager(ctx, suite.cfg, env.ManagerOptions{Name: "sluice-dataplane", Logger: poll.Logger(), GitAllowInsecureHTTP: true}); err != nil {
			return fmt.Errorf("starting sluice: %w", err)
		}
		go servePods(ctx, suite.c)
		suite.proxy, err = startProxy(ctx, c)
		return err
	}))
}
