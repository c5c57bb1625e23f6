package restart

import (
	"testing"

	"github.com/sluice-dev/sluice/internal/killpoint"
	"github.com/sluice-dev/sluice/test/managerproc"
)

// sluice is one sluice manager process.
type sluice struct {
	*managerproc.Process
}

// startSluice runs the sluice binary in local mode as process name, with
// extra flags, and waits until its webhooks are registered and it is ready.
func startSluice(t *testing.T, name string, extra ...string) *sluice {
	t.Helper()
	return startSluiceAt(t, name, "", nil, extra...)
}

// startSluiceAt is startSluice with the process blocking at the kill points
// given (for objects in namespace ns), until it is killed there.
func startSluiceAt(t *testing.T, name, ns string, points []killpoint.Point, extra ...string) *sluice {
	t.Helper()
	return &sluice{managerproc.Start(t, managerproc.Options{
		Name: name, Binary: suite.binary, Kubeconfig: suite.kubeconfig, Client: suite.c, Flags: extra,
		KillPoints: points, KillNamespace: ns,
	})}
}

// reached waits until the process blocks at one or more kill points and
// returns them, failing the test if none is reached in time.
func (s *sluice) reached(t *testing.T) []killpoint.Point {
	t.Helper()
	return s.ReachedKillPoints(t)
}
