//go:build sluicetest

package killpoint

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A tagged build passes every point but the named ones, and blocks at a
// named one after recording it.
func TestTaggedBuild_blocksAtTheNamedPointOnly(t *testing.T) {
	file := filepath.Join(t.TempDir(), "points")
	t.Setenv(EnvPoint, string(DeploymentMoved)+","+string(TrafficChanged))
	t.Setenv(EnvNamespace, "ns")
	t.Setenv(EnvFile, file)
	ctx := context.Background()
	Reached(ctx, DeploymentArmed, "ns/web")          // not named
	Reached(ctx, DeploymentMoved, "other/web")       // another namespace
	ReachedIf(ctx, false, DeploymentMoved, "ns/web") // condition false
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("a point was recorded for a call that must pass: %v", err)
	}
	go Reached(ctx, TrafficChanged, "ns/web")
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(file)
		if string(b) == "traffic-changed ns/web\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("recorded %q, want the blocked point", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
