package e2e

import (
	"maps"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/kube"
)

// Given the nginx Ingress release paused at step 2 (the header match) of
// v2
// When the image changes again to v3
// Then the release restarts at step 1: the routing of v2 is removed before
// v3's pods get any request, the stable Service keeps selecting the v1
// pods, and step 1 routes 20% to the v3 pods alone; the release of v3 then
// completes and everything is restored.
func TestTraffic_newRevisionMidRelease_reroutesToTheNewCanary(t *testing.T) {
	ns := newNamespace(t)
	svcBefore, ingBefore := ingressRelease(t, ns)
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	ro := waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	stable := ro.Status.CanaryStatus.StableRevision

	monitor := watchRouting(t, ns, "web")
	setImage(t, ns, "web", v3)
	ro = waitRollout(t, ns, "web", "step 1 of v3 paused", func(r *rolloutsv1beta1.Rollout) bool {
		cs := r.Status.CanaryStatus
		return cs != nil && cs.CurrentStepIndex == 1 && cs.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused && cs.CanaryRevision != ro.Status.CanaryStatus.CanaryRevision
	})
	if got := serviceSelector(t, ns, "web"); !maps.Equal(got, map[string]string{"app": "web", "pod-template-hash": stable}) {
		t.Fatalf("stable Service selector %v, want the v1 pods (%s)", got, stable)
	}
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "20"})
	eventually(t, "the v2 canary pod gone", func() (bool, string) {
		imgs := podImages(t, ns, "web")
		return imgs[v2] == 0, ""
	})
	assertSelected(t, ns, map[string]int{v3: 1}, map[string]int{v1: 4})
	assertNeverRoutedToUnreadyPods(t, monitor.snapshots())

	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 3, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v3)
	assertTrafficRestored(t, ns, svcBefore, ingBefore)
}

// Given the nginx Ingress release paused at step 3 (50%)
// When the Rollout is disabled
// Then the routing is removed and the Services restored, the Deployment
// is handed back and finishes on v2, and the Rollout is Disabled.
func TestTraffic_disabledMidRelease_restoresTheRouting(t *testing.T) {
	ns := newNamespace(t)
	svcBefore, ingBefore := ingressRelease(t, ns)
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 3, rolloutsv1beta1.CanaryStepStatePaused)
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "50"})

	ro := getRollout(t, ns, "web")
	patch := client.MergeFrom(ro.DeepCopy())
	ro.Spec.Disabled = true
	if err := suite.c.Patch(ctxFor(t), ro, patch); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, ns, "web", "Disabled", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseDisabled
	})
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")
	assertTrafficRestored(t, ns, svcBefore, ingBefore)
}

// Given the nginx Ingress release paused at step 1 (20%), the stable
// Service narrowed to the v1 pods
// When someone deletes the Rollout's BatchRelease by hand (its finalizer
// hands the Deployment back to Kubernetes, which finishes the rollout to
// v2 unless the release takes the Deployment back first)
// Then the stable Service selects ready pods at every moment, the release
// goes on to its end, and everything is restored.
func TestTraffic_batchReleaseDeletedByHand_neverLeavesTheStableServiceWithoutPods(t *testing.T) {
	ns := newNamespace(t)
	svcBefore, ingBefore := ingressRelease(t, ns)
	setImage(t, ns, "web", v2)
	ro := waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	if got := serviceSelector(t, ns, "web"); got["pod-template-hash"] != ro.Status.CanaryStatus.StableRevision {
		t.Fatalf("stable Service selector %v, want it narrowed to %s", got, ro.Status.CanaryStatus.StableRevision)
	}
	serving := kube.WatchServing(t, suite.c, ns)
	br := &rolloutsv1beta1.BatchRelease{}
	if err := suite.c.Get(ctxFor(t), client.ObjectKey{Namespace: ns, Name: "web"}, br); err != nil {
		t.Fatal(err)
	}
	if err := suite.c.Delete(ctxFor(t), br); err != nil {
		t.Fatal(err)
	}
	approveToTheEnd(t, ns, "web")
	waitDeploymentComplete(t, ns, "web", v2)
	serving.AssertAlwaysServed(t)
	assertTrafficRestored(t, ns, svcBefore, ingBefore)
}

// approveToTheEnd approves each step the release of the Rollout name
// pauses at until it completes.
func approveToTheEnd(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, "the release completed", func() (bool, string) {
		ro := getRollout(t, ns, name)
		cs := ro.Status.CanaryStatus
		if cs != nil && cs.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused {
			approveByStatus(t, ns, name)
		}
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && cs != nil && cs.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted, describe(ro)
	})
}
