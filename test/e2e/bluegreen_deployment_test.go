package e2e

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a blue-green Rollout of a Deployment of 4 pods whose first step
// releases 100% and pauses (OpenKruise's usual shape: 100% of the new pods,
// then traffic shifted over later steps)
// When a new image is released and the step pauses
// Then all 4 old pods and all 4 new ones keep running while the step waits:
// the new pods never count as available, so Kubernetes never treats the new
// ReplicaSet as saturated and never scales the old one down; the last step
// pauses with them all too; after its approval the release completes with
// only new pods.
func TestRollout_blueGreen_fullStepBeforeTheLast_keepsEveryOldPod(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	ro := newRollout(ns, "web")
	ro.Spec.Strategy = rolloutsv1beta1.RolloutStrategy{BlueGreen: &rolloutsv1beta1.BlueGreenStrategy{
		Steps: []rolloutsv1beta1.CanaryStep{step("100%", nil), step("100%", nil)},
	}}
	createRollout(t, ro)
	capacity := watchCapacity(t, ns, "web")
	setImage(t, ns, "web", v2)
	waitRollout(t, ns, "web", "blue-green step 1 paused", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.CurrentStepIndex == 1 && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
	// Once Kubernetes has seen all 8 pods ready, the only thing that could
	// make it drop the old ones is the new ReplicaSet counting as fully
	// available.
	eventually(t, "the Deployment controller sees 8 ready pods", func() (bool, string) {
		d := &appsv1.Deployment{}
		if err := suite.c.Get(ctxFor(t), client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil {
			return false, err.Error()
		}
		return d.Status.ObservedGeneration == d.Generation && d.Status.ReadyReplicas == 8,
			fmt.Sprintf("generation %d observed %d ready %d available %d", d.Generation, d.Status.ObservedGeneration, d.Status.ReadyReplicas, d.Status.AvailableReplicas)
	})
	sets := &appsv1.ReplicaSetList{}
	if err := suite.c.List(ctxFor(t), sets, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, rs := range sets.Items {
		image := rs.Spec.Template.Spec.Containers[0].Image
		if rs.Spec.Replicas == nil || *rs.Spec.Replicas != 4 {
			t.Errorf("ReplicaSet %s (%s) wants %v pods while step 1 is paused, want 4", rs.Name, image, rs.Spec.Replicas)
		}
		if image == v2 && rs.Status.AvailableReplicas != 0 {
			t.Errorf("new ReplicaSet %s has %d available pods while paused: Kubernetes would scale the old one down", rs.Name, rs.Status.AvailableReplicas)
		}
	}
	if pods := podImages(t, ns, "web"); pods[v1] != 4 || pods[v2] != 4 {
		t.Fatalf("step 1: pods by image %v, want 4 old and 4 new", pods)
	}
	approveBlueGreen(t, ns, "web")
	waitRollout(t, ns, "web", "blue-green step 2 paused", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.CurrentStepIndex == 2 && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
	if pods := podImages(t, ns, "web"); pods[v1] != 4 || pods[v2] != 4 {
		t.Fatalf("step 2: pods by image %v, want 4 old and 4 new", pods)
	}
	approveBlueGreen(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")
	if err := capacity.within(8, 4); err != nil {
		t.Fatalf("capacity during the blue-green release: %v", err)
	}
}
