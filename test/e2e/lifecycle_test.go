package e2e

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/webhook/registration"
)

// Given a release paused at step 1
// When the Rollout is deleted
// Then the Deployment is handed back and Kubernetes finishes the rollout,
// the Deployment keeps nothing of sluice's, and the Rollout goes away.
func TestRollout_deletedMidRelease_handsTheWorkloadBack(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	ro := waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)

	if err := suite.c.Delete(ctxFor(t), ro); err != nil {
		t.Fatal(err)
	}
	eventually(t, "rollout gone", func() (bool, string) {
		err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "web"}, &rolloutsv1beta1.Rollout{})
		return apierrors.IsNotFound(err), "get: " + errString(err)
	})
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")
	if _, ok := getDeployment(t, ns, "web").Labels[rolloutsv1beta1.WorkloadTypeLabel]; ok {
		t.Errorf("workload-type label left after the Rollout was deleted")
	}
}

// Given a release paused at step 1
// When the Rollout is disabled, and later the image changes again
// Then the Deployment is handed back and finishes, the Rollout is Disabled,
// and the next change rolls out natively without being held.
func TestRollout_disabledMidRelease_handsBackAndStopsHolding(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	ro := waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)

	ro.Spec.Disabled = true
	if err := suite.c.Update(ctxFor(t), ro); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, ns, "web", "Disabled", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseDisabled
	})
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")

	setImage(t, ns, "web", v3)
	if getDeployment(t, ns, "web").Spec.Paused {
		t.Fatal("a disabled Rollout held the update")
	}
	waitDeploymentComplete(t, ns, "web", v3)
}

func errString(err error) string {
	if err == nil {
		return "found"
	}
	return err.Error()
}

// Given a release of v2 paused at step 2
// When the image changes to v3
// Then the release restarts at step 1 for v3 while the Deployment stays
// held, and finishes with every pod on v3.
func TestRollout_newRevisionMidRelease_restartsAtStepOne(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 6, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)

	setImage(t, ns, "web", v3)
	ro := waitRollout(t, ns, "web", "step 1 of v3 paused", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.CurrentStepIndex == 1 && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused &&
			r.Status.CanaryStatus.CanaryReadyReplicas == 1 && podImages(t, ns, "web")[v3] == 1
	})
	assertHeld(t, ns, "web")
	if got := podImages(t, ns, "web"); got[v3]+got[v2]+got[v1] != 6 {
		t.Fatalf("pods by image %v, want 6 in all", got)
	}
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "web"); got[v3] != 3 {
		t.Fatalf("step 2 of v3: pods by image %v, want 3 on v3", got)
	}
	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed on v3", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus.CanaryRevision == ro.Status.CanaryStatus.CanaryRevision &&
			r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v3)
	assertRestored(t, ns, "web")
}

// Given a release paused at step 1 and sluice stopped
// When a user applies the Deployment's sluice.dev/restore-patch by hand
// Then Kubernetes finishes the rollout, and once sluice is back the Rollout
// completes without holding the Deployment again.
func TestRollout_restorePatchAppliedByHand_completesWhenSluiceReturns(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 6, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)

	if err := suite.manager.Stop(); err != nil {
		t.Fatalf("stopping sluice: %v", err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			if err := startManager(ctxFor(t)); err != nil {
				t.Errorf("restarting sluice: %v", err)
			}
		}
	})
	d := getDeployment(t, ns, "web")
	patch := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
	if err := suite.c.Patch(ctxFor(t), d, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("kubectl-patch")); err != nil {
		t.Fatalf("applying the restore patch: %v", err)
	}
	assertRestored(t, ns, "web")
	waitDeploymentComplete(t, ns, "web", v2)

	restarted = true
	if err := startManager(ctxFor(t)); err != nil {
		t.Fatalf("restarting sluice: %v", err)
	}
	waitRollout(t, ns, "web", "completed after restart", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	assertRestored(t, ns, "web")
}

// Given a release paused at step 1 of a Rollout annotated
// sluice.dev/keep-workload-held-on-deletion: "true"
// When the Rollout is deleted
// Then the Deployment stays held (paused, one new pod) with its restore
// patch, and the Rollout goes away.
func TestRollout_deletedWithKeepHeld_leavesTheWorkloadHeld(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	ro := newRollout(ns, "web", step("1", nil), step("100%", nil))
	ro.Annotations = map[string]string{rolloutsv1beta1.KeepHeldOnDeletionAnnotation: "true"}
	createRollout(t, ro)
	setImage(t, ns, "web", v2)
	ro = waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)

	if err := suite.c.Delete(ctxFor(t), ro); err != nil {
		t.Fatal(err)
	}
	eventually(t, "rollout gone", func() (bool, string) {
		err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "web"}, &rolloutsv1beta1.Rollout{})
		return apierrors.IsNotFound(err), "get: " + errString(err)
	})
	assertHeld(t, ns, "web")
	if got := podImages(t, ns, "web"); got[v2] != 1 || got[v1] != 3 {
		t.Fatalf("pods by image %v, want the batch kept: 1 new, 3 old", got)
	}
}

// Given sluice is stopped (its webhooks unreachable)
// When Deployments with and without a Rollout are updated
// Then both updates go through: the workload webhook fails open, and
// Kubernetes rolls them out on its own; Rollout writes fail closed.
func TestWebhook_sluiceDown_doesNotBlockWorkloadUpdates(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "plain", 2, v1)
	deployment(t, ns, "web", 2, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("100%", nil)))
	waitRollout(t, ns, "web", "labelled workload", func(*rolloutsv1beta1.Rollout) bool {
		return getDeployment(t, ns, "web").Labels[rolloutsv1beta1.WorkloadTypeLabel] != ""
	})

	if err := suite.manager.Stop(); err != nil {
		t.Fatalf("stopping sluice: %v", err)
	}
	t.Cleanup(func() {
		if err := startManager(ctxFor(t)); err != nil {
			t.Errorf("restarting sluice: %v", err)
		}
	})
	// Leave the webhooks registered, pointing at a port nobody listens on,
	// as a killed sluice leaves them.
	opts := registration.Options{Name: "sluice-e2e", ClientConfig: func(path string) admissionregistrationv1.WebhookClientConfig {
		url := "https://127.0.0.1:1" + path
		return admissionregistrationv1.WebhookClientConfig{URL: &url}
	}}
	for _, obj := range []client.Object{registration.Mutating(opts), registration.Validating(opts)} {
		if err := suite.c.Patch(ctxFor(t), obj, client.Apply, client.FieldOwner("e2e"), client.ForceOwnership); err != nil { //nolint:staticcheck // typed apply of whole objects
			t.Fatal(err)
		}
	}
	setImage(t, ns, "plain", v2)
	setImage(t, ns, "web", v2)
	waitDeploymentComplete(t, ns, "plain", v2)
	waitDeploymentComplete(t, ns, "web", v2)
	if err := annotate(t, ns, "web", "touch", "1"); err == nil {
		t.Fatal("a Rollout write went through while its validating webhook was unreachable")
	}
}
