package e2e

import (
	"fmt"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a Rollout with steps 3 and 50% of a Deployment of 10 pods (3 pods,
// then 5)
// When the Deployment is scaled to 4 through its scale subresource, as an
// HPA does, so that 50% is 2 pods, fewer than step 1's 3
// Then the Rollout reports that its plan does not fit 4 replicas, and it
// can still be annotated, applied again by a GitOps tool (server-side
// apply under another field manager) and deleted: admission validates what
// an update changes, never the live replica count, and sluice's own
// finalizer removal always goes through, so nothing sticks in Terminating.
func TestRollout_hpaScalesBelowThePlan_updatesAndDeletionStillAdmitted(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 10, v1)
	ro := newRollout(ns, "web", step("3", nil), step("50%", nil))
	createRollout(t, ro)

	scale := &autoscalingv1.Scale{}
	d := getDeployment(t, ns, "web")
	if err := suite.c.SubResource("scale").Get(ctxFor(t), d, scale); err != nil {
		t.Fatalf("reading the scale: %v", err)
	}
	scale.Spec.Replicas = 4
	if err := suite.c.SubResource("scale").Update(ctxFor(t), d, client.WithSubResourceBody(scale), client.FieldOwner("horizontal-pod-autoscaler")); err != nil {
		t.Fatalf("scaling to 4: %v", err)
	}
	waitDeploymentComplete(t, ns, "web", v1)
	waitRollout(t, ns, "web", "a condition saying steps[1] does not fit 4 replicas", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSupported)
		return c != nil && c.Status == "False" && strings.Contains(c.Message, "spec.strategy.canary.steps[1].replicas") &&
			strings.Contains(c.Message, "4 replicas")
	})

	// The user annotates it.
	if err := annotate(t, ns, "web", "team", "shop"); err != nil {
		t.Fatalf("annotating the Rollout after the scale: %v", err)
	}
	// The GitOps tool applies the same manifest again, under its own field
	// manager.
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(newRollout(ns, "web", step("3", nil), step("50%", nil)))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(rolloutsv1beta1.GroupVersion.String())
	u.SetKind("Rollout")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	if err := suite.c.Apply(ctxFor(t), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("argocd-controller"), client.ForceOwnership); err != nil {
		t.Fatalf("applying the Rollout again as argocd-controller: %v", err)
	}
	// And deletes it.
	if err := suite.c.Delete(ctxFor(t), getRollout(t, ns, "web")); err != nil {
		t.Fatalf("deleting the Rollout: %v", err)
	}
	eventually(t, "the Rollout gone, not stuck in Terminating", func() (bool, string) {
		r := &rolloutsv1beta1.Rollout{}
		err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "web"}, r)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("get: %v; finalizers %v, status %s", err, r.Finalizers, describe(r))
	})
}
