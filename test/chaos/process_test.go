//go:build chaos

package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/test/managerproc"
)

// manager is one sluice manager process.
type manager = managerproc.Process

// startManager runs the sluice binary in local mode as process name, with
// extra flags, serving GitHub webhooks, and waits until it is ready (its
// webhooks registered unless it is a standby).
func startManager(t *testing.T, name string, standby bool, extra ...string) *manager {
	t.Helper()
	ready := managerproc.Registered
	if standby {
		ready = managerproc.Healthy
	}
	return managerproc.Start(t, managerproc.Options{
		Name: name, Binary: suite.binary, Kubeconfig: suite.kubeconfig, Client: suite.c, Flags: extra,
		GitHubHook: true, Ready: ready, Timeout: 2 * time.Minute,
	})
}

// deleteWebhooks removes webhook configurations killed managers left.
func deleteWebhooks(names ...string) {
	managerproc.DeleteWebhooks(context.Background(), suite.c, names...)
}
