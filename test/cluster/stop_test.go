package cluster_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/test/cluster"
)

func TestStop_killsEveryStartedProcess_andIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// Given a second, one-node cluster in a temporary directory
	c, err := cluster.Start(ctx, cluster.Options{Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	procs, err := cluster.Processes(c.Dir())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range procs {
		names = append(names, p.Name)
		if !p.Alive() {
			t.Errorf("%s is not running before Stop", p)
		}
	}
	want := []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}
	if !slices.Equal(names, want) {
		t.Fatalf("recorded processes = %v, want %v", names, want)
	}

	// When it is stopped twice
	if err := c.Stop(); err != nil {
		t.Fatalf("first Stop: %v", err)
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}

	// Then no process it started runs, and its temporary directory is gone
	for _, p := range procs {
		if p.Alive() {
			t.Errorf("%s still runs after Stop", p)
		}
	}
	if _, err := os.Stat(c.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state directory %s after Stop: %v, want it removed", c.Dir(), err)
	}
	select {
	case err := <-c.Failed():
		t.Errorf("Failed reported a stopped process: %v", err)
	default:
	}
}

func TestStart_inDirectoryOfRunningCluster_refusesAndLeavesItRunning(t *testing.T) {
	_, err := cluster.Start(t.Context(), cluster.Options{Dir: testCluster.Dir()})
	if err == nil || !strings.Contains(err.Error(), "still runs") {
		t.Fatalf("Start in a running cluster's directory: error = %v, want one saying it still runs", err)
	}
	if _, err := os.Stat(testCluster.KubeconfigPath()); err != nil {
		t.Errorf("the running cluster's kubeconfig: %v", err)
	}
	procs, err := cluster.Processes(testCluster.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if !p.Alive() {
			t.Errorf("%s of the running cluster stopped", p)
		}
	}
}

func TestStart_withoutBinaries_failsNamingWhatIsMissing(t *testing.T) {
	t.Parallel()
	_, err := cluster.Start(t.Context(), cluster.Options{Dir: t.TempDir(), BinDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "lacks etcd, kube-apiserver") {
		t.Fatalf("Start without binaries: error = %v, want one listing the missing binaries", err)
	}
}
