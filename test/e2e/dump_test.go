package e2e

import (
	"context"
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// dumpOnFailure logs the release-relevant objects of ns when t fails, so a
// failed scenario can be understood from its output alone.
func dumpOnFailure(t *testing.T, ns string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx := context.Background()
		lists := []client.ObjectList{&appsv1.DeploymentList{}, &appsv1.ReplicaSetList{}, &rolloutsv1beta1.RolloutList{}, &rolloutsv1beta1.BatchReleaseList{}}
		for _, l := range lists {
			if err := suite.c.List(ctx, l, client.InNamespace(ns)); err != nil {
				t.Logf("listing %T: %v", l, err)
				continue
			}
			b, _ := json.MarshalIndent(l, "", " ")
			t.Logf("%T:\n%s", l, b)
		}
	})
}
