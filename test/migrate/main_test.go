// Package migrate tests the move from a running OpenKruise Rollouts to
// sluice on the local control plane: the CRDs, Rollouts, BatchReleases and
// workloads are written as OpenKruise leaves them in the middle of
// releases, then sluice's CRDs are installed over them and sluice is
// started, and the releases must finish as the user asked
// (docs/migrating-from-openkruise.md).
package migrate

import (
	"os"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/sluice-dev/sluice/test/cluster"
)

// suite is what the tests share: one control plane, on which sluice is
// started by the test itself, after OpenKruise's objects are written.
var suite struct {
	cfg *rest.Config
}

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{}, func(c *cluster.Cluster) error {
		suite.cfg = c.RESTConfig()
		return nil
	}))
}
