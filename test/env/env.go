// Package env prepares a cluster for sluice's integration tests, benchmarks
// and demo: it installs the CRDs and runs the sluice manager in-process
// against the cluster, the way `sluice --local` runs.
package env

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/config"
)

// InstallCRDs applies sluice's CRDs and waits until they are established.
func InstallCRDs(ctx context.Context, cfg *rest.Config) error {
	return config.InstallCRDs(ctx, cfg, "sluice-test")
}

// ManagerUser is who the manager StartManager runs authenticates as: a
// user of its own, apart from the tests' admin, as an installed sluice runs
// under its ServiceAccount. sluice's admission webhooks tell its own writes
// from everyone else's by this identity.
const ManagerUser = "sluice-manager"

// ManagerConfig returns cfg acting as ManagerUser (impersonated, with the
// permissions of a cluster admin), the identity of a manager StartManager
// runs.
func ManagerConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: ManagerUser, Groups: []string{"system:masters"}}
	return c
}

// ManagerOptions configure StartManager.
type ManagerOptions struct {
	// Name distinguishes the webhook configurations of several managers.
	Name string
	// Logger receives the manager's logs; zero discards them.
	Logger logr.Logger
	// WrapTransport wraps the manager's API transport.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// MetricsAddr is where the manager serves its metrics; empty disables
	// them.
	MetricsAddr string
	// WorkloadFailurePolicy is the failure policy of the workload webhook,
	// Ignore (the default) or Fail.
	WorkloadFailurePolicy string
	// GitAllowInsecureHTTP lets GitGates read Git over plain HTTP (the
	// test Git server).
	GitAllowInsecureHTTP bool
	// GitHubWebhookAddr serves sluice's GitHub webhook receiver (path
	// app.GitHubWebhookPath) on this address; empty disables it.
	GitHubWebhookAddr string
}

// Manager is a sluice manager running in-process.
type Manager struct {
	cancel context.CancelFunc
	done   chan error
}

// StartManager runs the sluice manager in local mode against cfg, as
// ManagerUser, and returns once its webhooks are registered and served.
func StartManager(ctx context.Context, cfg *rest.Config, o ManagerOptions) (*Manager, error) {
	if o.Name == "" {
		o.Name = "sluice-test"
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.MetricsAddr == "" {
		o.MetricsAddr = "0"
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ready := make(chan struct{})
	m := &Manager{cancel: cancel, done: make(chan error, 1)}
	go func() {
		m.done <- app.Run(runCtx, ManagerConfig(cfg), app.Options{
			MetricsAddr:           o.MetricsAddr,
			ProbeAddr:             "0",
			Local:                 true,
			WebhookConfigName:     o.Name,
			WrapTransport:         o.WrapTransport,
			Logger:                o.Logger,
			OnReady:               func() { close(ready) },
			InProcessRestarts:     true,
			ProgressDeadline:      10 * time.Minute,
			WorkloadFailurePolicy: o.WorkloadFailurePolicy,
			GitAllowInsecureHTTP:  o.GitAllowInsecureHTTP,
			GitHubWebhookAddr:     o.GitHubWebhookAddr,
		})
	}()
	select {
	case <-ready:
		return m, nil
	case err := <-m.done:
		cancel()
		return nil, fmt.Errorf("sluice manager stopped before it was ready: %w", err)
	case <-time.After(60 * time.Second):
		cancel()
		return nil, errors.New("sluice manager not ready after 60s")
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
}

// Stop stops the manager, waits for it to end, and returns its error.
func (m *Manager) Stop() error {
	m.cancel()
	select {
	case err := <-m.done:
		return err
	case <-time.After(30 * time.Second):
		return errors.New("sluice manager did not stop within 30s")
	}
}
