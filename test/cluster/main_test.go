package cluster_test

import (
	"os"
	"testing"

	"github.com/sluice-dev/sluice/test/cluster"
)

// testCluster is the cluster this package's integration tests share.
var testCluster *cluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{}, func(c *cluster.Cluster) error {
		testCluster = c
		return nil
	}))
}
