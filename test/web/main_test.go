// Package webtest tests the rollout web view end to end: a real sluice manager
// on the local control plane serves it, and headless Chromium reads it the
// way a person would.
package webtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/env"
	"github.com/sluice-dev/sluice/test/poll"
)

// suite is what the tests share: one control plane, one sluice serving the
// web view at webURL.
var suite struct {
	cfg    *rest.Config
	c      client.Client
	webURL string
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
		return startManager(ctx)
	}))
}

// startManager runs sluice in local mode with the web view on a free
// loopback port, and returns once its webhooks are served. The manager
// stops with the test binary.
func startManager(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	suite.webURL = "http://" + addr
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- app.Run(context.WithoutCancel(ctx), env.ManagerConfig(suite.cfg), app.Options{
			MetricsAddr: "0", ProbeAddr: "0", Local: true, WebhookConfigName: "sluice-web-test",
			Logger: testLogger(), OnReady: func() { close(ready) }, InProcessRestarts: true,
			ProgressDeadline: 10 * time.Minute,
			Web:              app.WebOptions{Addr: addr},
		})
	}()
	select {
	case <-ready:
		return nil
	case err := <-done:
		return fmt.Errorf("sluice manager stopped before it was ready: %w", err)
	case <-time.After(60 * time.Second):
		return errors.New("sluice manager not ready after 60s")
	}
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// testLogger logs the manager to stderr when SLUICE_TEST_LOG is set.
func testLogger() logr.Logger { return poll.Logger() }
