//go:build !sluicetest

package killpoint

import (
	"context"
	"errors"
	"testing"
)

// The default build never blocks, whatever the environment says.
func TestDefaultBuild_neverBlocks(t *testing.T) {
	t.Setenv(EnvPoint, string(DeploymentArmed))
	Reached(context.Background(), DeploymentArmed, "ns/web")
	ReachedIf(context.Background(), true, DeploymentArmed, "ns/web")
	want := errors.New("boom")
	if err := After(context.Background(), DeploymentArmed, "ns/web", want); err != want {
		t.Fatalf("After returned %v, want the error it was given", err)
	}
}
