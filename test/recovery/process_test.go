package recovery

import (
	"testing"

	"github.com/sluice-dev/sluice/test/managerproc"
)

// sluice is one sluice manager process.
type sluice = managerproc.Process

// startSluice runs the sluice binary in local mode as process name, with
// extra flags, and waits until its webhooks are registered and it is ready.
func startSluice(t *testing.T, name string, extra ...string) *sluice {
	t.Helper()
	return managerproc.Start(t, managerproc.Options{
		Name: name, Binary: suite.binary, Kubeconfig: suite.kubeconfig, Client: suite.c, Flags: extra,
	})
}

// deleteWebhooks removes webhook configurations a killed sluice left.
func deleteWebhooks(t *testing.T, names ...string) {
	managerproc.DeleteWebhooks(ctxFor(t), suite.c, names...)
}
