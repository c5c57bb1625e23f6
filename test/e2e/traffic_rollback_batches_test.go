package e2e

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a Deployment of 10 pods behind a NodePort Service and an nginx
// Ingress, and an in-place Rollout annotated rollback-in-batch routing
// through the Ingress with steps 1 pod + 20% / 50% + 50% / 100%, paused
// at step 2 (5 pods on v2, 50% of the requests to them)
// When the image is set back to v1
// Then the canary Ingress and Service go and the stable Service selects
// only the v1 pods before any v2 pod is replaced; the rollback goes
// through the steps (6 then 8 pods on v1), each step pausing with every
// request on the ready v1 pods and nothing routed to v2; the stable
// Service gets its selector back only once no v2 pod is left, and the
// Service and Ingress end exactly as before the release.
func TestTrafficRollback_inPlaceIngress_rollsBackInBatchesAfterTheRoutes(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 10, v1)
	webService(t, ns, "web", corev1.ServiceTypeNodePort)
	nginxIngress(t, ns, "web", "web")
	ro := trafficRollout(ns, "web", false, []rolloutsv1beta1.TrafficRoutingRef{viaIngress("web", "web")},
		trafficStep("1", "20%"), trafficStep("50%", "50%"), trafficStep("100%", ""))
	ro.Annotations = map[string]string{rolloutsv1beta1.RollbackInBatchAnnotation: "true"}
	createRollout(t, ro)
	svcBefore, ingBefore := userView(t, ns, "web", serviceGVK), userView(t, ns, "web", ingressGVK)

	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	forward := waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	stableHash, badHash := forward.Status.CanaryStatus.StableRevision, forward.Status.CanaryStatus.PodTemplateHash
	narrowed := map[string]string{"app": "web", "pod-template-hash": stableHash}
	if got := podImages(t, ns, "web"); got[v1] != 5 || got[v2] != 5 {
		t.Fatalf("step 2 of the release: pods by image %v, want 5 and 5", got)
	}
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "50"})
	assertSelected(t, ns, map[string]int{v2: 5}, map[string]int{v1: 5})

	monitor := watchRouting(t, ns, "web")
	setImage(t, ns, "web", v1)
	for _, want := range []struct {
		step   int32
		v1, v2 int
	}{{1, 6, 4}, {2, 8, 2}} {
		got := waitRollout(t, ns, "web", fmt.Sprintf("rollback step %d paused", want.step), func(r *rolloutsv1beta1.Rollout) bool {
			return r.Status.CurrentStepIndex == want.step && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused &&
				r.Status.CanaryStatus.CanaryRevision != forward.Status.CanaryStatus.CanaryRevision
		})
		if cs := got.Status.CanaryStatus; cs.PodTemplateHash != stableHash || cs.StableRevision != stableHash {
			t.Fatalf("rollback step %d: canary status %+v, want the release of %s", want.step, cs, stableHash)
		}
		if pods := podImages(t, ns, "web"); pods[v1] != want.v1 || pods[v2] != want.v2 {
			t.Fatalf("rollback step %d: pods by image %v, want %d on v1 and %d on v2", want.step, pods, want.v1, want.v2)
		}
		if pods := podsWithHash(t, ns, "web", badHash); pods[v2] != want.v2 {
			t.Fatalf("rollback step %d: pods of the abandoned revision %v", want.step, pods)
		}
		if sel := serviceSelector(t, ns, "web"); !maps.Equal(sel, narrowed) {
			t.Fatalf("rollback step %d: stable Service selector %v, want %v", want.step, sel, narrowed)
		}
		if got := selectedPods(t, ns, "web"); !maps.Equal(got, map[string]int{v1: want.v1}) {
			t.Fatalf("rollback step %d: stable Service selects %v, want the %d v1 pods", want.step, got, want.v1)
		}
		if a := canaryAnnotations(t, ns, "web"); a != nil {
			t.Fatalf("rollback step %d: canary Ingress still there with %v", want.step, a)
		}
		if sel := serviceSelector(t, ns, "web-canary"); sel != nil {
			t.Fatalf("rollback step %d: canary Service still there, selecting %v", want.step, sel)
		}
		if c := condition(got, "TrafficRouted"); c == nil || c.Status != "True" {
			t.Fatalf("rollback step %d: TrafficRouted %+v", want.step, c)
		}
		assertHeld(t, ns, "web")
		approveByStatus(t, ns, "web")
	}
	done := waitRollout(t, ns, "web", "rolled back", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && c.Status == "False" && c.Reason == "RolledBack"
	})
	if !strings.Contains(done.Status.Message, "in batches") {
		t.Fatalf("message %q", done.Status.Message)
	}
	waitDeploymentComplete(t, ns, "web", v1)
	assertRestored(t, ns, "web")
	assertTrafficRestored(t, ns, svcBefore, ingBefore)
	if got := podImages(t, ns, "web"); got[v1] != 10 || got[v2] != 0 {
		t.Fatalf("after the rollback: pods by image %v", got)
	}

	seen := monitor.snapshots()
	assertNeverRoutedToUnreadyPods(t, seen)
	firstReplaced, firstRestored := -1, -1
	for i, s := range seen {
		if firstReplaced < 0 && s.images[v2] < 5 {
			firstReplaced = i
		}
		if firstReplaced >= 0 && (s.canaryIngress || s.canaryReady >= 0) {
			t.Fatalf("snapshot %d/%d: %d v2 pods left while the canary Ingress (%s) or Service (%d ready) still exists",
				i, len(seen), s.images[v2], fmtBool(s.canaryIngress), s.canaryReady)
		}
		if firstRestored < 0 && maps.Equal(s.stableSelector, map[string]string{"app": "web"}) {
			firstRestored = i
			if s.images[v2] != 0 {
				t.Fatalf("snapshot %d/%d: the stable Service was restored while %d v2 pods ran", i, len(seen), s.images[v2])
			}
		}
		if firstRestored < 0 && !maps.Equal(s.stableSelector, narrowed) {
			t.Fatalf("snapshot %d/%d: stable Service selector %v during the rollback", i, len(seen), s.stableSelector)
		}
	}
	if firstReplaced < 0 || firstRestored < firstReplaced {
		t.Fatalf("first v2 pod replaced at snapshot %d, stable Service restored at %d, of %d", firstReplaced, firstRestored, len(seen))
	}
}

// Given the canary Deployment release of TestTraffic_nginxIngress_canarySteps
// (4 pods, canary Deployment beside them, an nginx Ingress) on a Rollout
// annotated rollback-in-batch, paused at step 3 (2 canary pods, 50%)
// When the image is set back to v1
// Then it rolls back at once, as OpenKruise does (rollback-in-batch is for
// workloads whose own pods were replaced): the routes go back to the
// stable pods, the canary Deployment goes, the stable pods are the ones
// that ran before, and the RolledBack event says why the annotation was
// ignored.
func TestTrafficRollback_canaryDeployment_rollsBackAtOnceSayingWhy(t *testing.T) {
	ns := newNamespace(t)
	svcBefore, ingBefore := ingressRelease(t, ns)
	if err := annotate(t, ns, "web", rolloutsv1beta1.RollbackInBatchAnnotation, "true"); err != nil {
		t.Fatal(err)
	}
	stablePods := podNames(t, ns, "web")
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	ro := waitStep(t, ns, "web", 3, rolloutsv1beta1.CanaryStepStatePaused)
	assertPodsByDeployment(t, ns, "web", map[string]map[string]int{"web": {v1: 4}, canaryName(ro): {v2: 2}})
	assertCanaryIngress(t, ns, "web", "web", map[string]string{"canary": "true", "canary-weight": "50"})

	monitor := watchRouting(t, ns, "web")
	setImage(t, ns, "web", v1)
	done := waitRollout(t, ns, "web", "rolled back", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && c.Reason == "RolledBack"
	})
	if done.Status.CurrentStepIndex != 3 || strings.Contains(done.Status.Message, "in batches") {
		t.Fatalf("the rollback went through steps: %s", describe(done))
	}
	assertNoCanary(t, ns, "web")
	waitDeploymentComplete(t, ns, "web", v1)
	assertRestored(t, ns, "web")
	assertTrafficRestored(t, ns, svcBefore, ingBefore)
	if got := podNames(t, ns, "web"); fmt.Sprint(got) != fmt.Sprint(stablePods) {
		t.Fatalf("the stable Deployment's pods changed: %v, were %v", got, stablePods)
	}
	assertNeverRoutedToUnreadyPods(t, monitor.snapshots())
	list, err := suite.kube.EventsV1().Events(ns).List(ctxFor(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "Rollout" && e.Reason == "RolledBack" {
			notes = append(notes, e.Note)
		}
	}
	why := rolloutsv1beta1.RollbackInBatchAnnotation + " ignored: a canary Deployment release that routes traffic never changed the stable pods"
	if !strings.Contains(strings.Join(notes, "\n"), why) {
		t.Fatalf("RolledBack events %q, want one saying %q", notes, why)
	}
}
