package e2e

import (
	"fmt"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload/canarydeployment"
)

// Given a Deployment of 10 pods and a canary-style Rollout (an extra canary
// Deployment) with steps 1 / 50% / 100% and patchPodTemplateMetadata
// When the image changes and each paused step is approved the way
// kubectl-kruise does it
// Then the update is held on the stable Deployment, which keeps its 10 old
// pods untouched while a canary Deployment runs 1, then 5 new pods carrying
// the patched metadata; at the end the stable Deployment runs 10 new pods,
// unpaused and configured as before, and the canary is gone; at no moment
// are fewer than 10 pods ready.
func TestCanaryDeployment_stepsThenPromotion_stableUntouchedUntilTheEnd(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 10, v1)
	stablePods := podNames(t, ns, "web")
	ro := canaryRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil))
	ro.Spec.Strategy.Canary.PatchPodTemplateMetadata = &rolloutsv1beta1.PatchPodTemplateMetadata{
		Labels:      map[string]string{"track": "canary"},
		Annotations: map[string]string{"example.com/canary": "true"},
	}
	createRollout(t, ro)

	capacity := watchCapacity(t, ns, "web")
	setImage(t, ns, "web", v2)
	d := getDeployment(t, ns, "web")
	if !d.Spec.Paused || d.Spec.Template.Spec.Containers[0].Image != v2 || d.Annotations[rolloutsv1beta1.InProgressingAnnotation] == "" {
		t.Fatalf("update not held: paused=%v image=%s annotations=%v", d.Spec.Paused, d.Spec.Template.Spec.Containers[0].Image, d.Annotations)
	}

	// Step 1: the stable keeps its 10 old pods, the canary runs 1 new pod.
	ro = waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	assertPodsByDeployment(t, ns, "web", map[string]map[string]int{"web": {v1: 10}, canaryName(ro): {v2: 1}})
	assertCanaryHeld(t, ns, "web", ro, 1)
	cs := ro.Status.CanaryStatus
	if cs.CanaryReplicas != 1 || cs.CanaryReadyReplicas != 1 {
		t.Fatalf("step 1 status: %s", describe(ro))
	}
	canaryHash := podTemplateHashes(t, ns, canaryName(ro))
	if len(canaryHash) != 1 || canaryHash[0] != cs.PodTemplateHash || cs.PodTemplateHash == cs.StableRevision {
		t.Fatalf("podTemplateHash %q, canary pods' hashes %v, stable revision %q", cs.PodTemplateHash, canaryHash, cs.StableRevision)
	}
	assertPatchedMetadataOnCanaryPodsOnly(t, ns, "web", canaryName(ro))

	// Step 2: 50% of 10.
	approveByStatus(t, ns, "web")
	ro = waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertPodsByDeployment(t, ns, "web", map[string]map[string]int{"web": {v1: 10}, canaryName(ro): {v2: 5}})
	assertCanaryHeld(t, ns, "web", ro, 5)
	assertPatchedMetadataOnCanaryPodsOnly(t, ns, "web", canaryName(ro))
	if got := podNames(t, ns, "web"); fmt.Sprint(got) != fmt.Sprint(stablePods) {
		t.Fatalf("the stable Deployment's pods changed during the release: %v, were %v", got, stablePods)
	}

	// Step 3 (100%, last: no pause), then promotion.
	approveByStatus(t, ns, "web")
	ro = waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2) // counts every app=web pod: no canary pod is left
	assertNoCanary(t, ns, "web")
	assertPodsByDeployment(t, ns, "web", map[string]map[string]int{"web": {v2: 10}})
	assertRestored(t, ns, "web")
	if c := condition(ro, rolloutsv1beta1.RolloutConditionSucceeded); c == nil || c.Status != "True" {
		t.Fatalf("Succeeded condition %+v", c)
	}
	if ro.Status.CanaryStatus.StableRevision != ro.Status.CanaryStatus.CanaryRevision {
		t.Fatalf("after completion the stable revision is not the released one: %s", describe(ro))
	}
	// The stable keeps its 10 pods until it is promoted; the canary goes
	// only once the stable is updated: at most 10 + 10 + 3 (the stable's
	// own maxSurge of 25%), never fewer than 10 ready.
	if err := capacity.within(23, 10); err != nil {
		t.Fatalf("capacity during the release: %v", err)
	}
}

// Given a canary-style release paused at step 2 of 3 (3 of 6 pods on the
// canary)
// When the image is set back to the stable revision
// Then the release is rolled back at once: the canary Deployment and its
// pods are deleted, and the stable Deployment, restored, still runs the
// very pods it ran before the release.
func TestCanaryDeployment_rollbackMidRelease_deletesCanaryAndKeepsStablePods(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 6, v1)
	stablePods := podNames(t, ns, "web")
	createRollout(t, canaryRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	ro := waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertPodsByDeployment(t, ns, "web", map[string]map[string]int{"web": {v1: 6}, canaryName(ro): {v2: 3}})

	setImage(t, ns, "web", v1)
	ro = waitRollout(t, ns, "web", "rolled back", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && c.Status == "False"
	})
	if ro.Status.CurrentStepIndex != 2 {
		t.Fatalf("rollback went through steps: %s", describe(ro))
	}
	assertNoCanary(t, ns, "web")
	waitDeploymentComplete(t, ns, "web", v1)
	assertRestored(t, ns, "web")
	if got := podNames(t, ns, "web"); fmt.Sprint(got) != fmt.Sprint(stablePods) {
		t.Fatalf("the stable Deployment's pods changed: %v, were %v", got, stablePods)
	}
}

// Given a canary-style release paused at step 1
// When the Rollout is deleted
// Then the canary Deployment and its pods are deleted, the stable
// Deployment is handed back and Kubernetes finishes its rollout, and the
// Rollout goes away.
func TestCanaryDeployment_rolloutDeletedMidRelease_removesCanaryAndHandsBack(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	createRollout(t, canaryRollout(ns, "web", step("1", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	ro := waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	assertPodsByDeployment(t, ns, "web", map[string]map[string]int{"web": {v1: 4}, canaryName(ro): {v2: 1}})

	if err := suite.c.Delete(ctxFor(t), ro); err != nil {
		t.Fatal(err)
	}
	eventually(t, "rollout gone", func() (bool, string) {
		err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "web"}, &rolloutsv1beta1.Rollout{})
		return apierrors.IsNotFound(err), "get: " + errString(err)
	})
	assertNoCanary(t, ns, "web")
	waitDeploymentComplete(t, ns, "web", v2)
	assertPodsByDeployment(t, ns, "web", map[string]map[string]int{"web": {v2: 4}})
	assertRestored(t, ns, "web")
	if _, ok := getDeployment(t, ns, "web").Labels[rolloutsv1beta1.WorkloadTypeLabel]; ok {
		t.Errorf("workload-type label left after the Rollout was deleted")
	}
}

// Given a canary-style release of v2 paused at step 2 (3 of 6 pods on the
// canary)
// When the image changes to v3
// Then the v2 canary is deleted and a v3 canary restarts at step 1 with 1
// pod while the stable keeps its 6 old pods; the release then finishes on
// v3 with no canary left.
func TestCanaryDeployment_newRevisionMidRelease_replacesTheCanary(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 6, v1)
	createRollout(t, canaryRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	ro := waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	v2Canary := canaryName(ro)

	setImage(t, ns, "web", v3)
	ro = waitRollout(t, ns, "web", "step 1 of v3 paused", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.CurrentStepIndex == 1 && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused &&
			canaryName(r) != v2Canary && r.Status.CanaryStatus.CanaryReadyReplicas == 1
	})
	eventually(t, "v2 canary pods gone", func() (bool, string) {
		got := podsByDeployment(t, ns, "web")
		return len(got) == 2, fmt.Sprint(got)
	})
	assertPodsByDeployment(t, ns, "web", map[string]map[string]int{"web": {v1: 6}, canaryName(ro): {v3: 1}})
	assertCanaryHeld(t, ns, "web", ro, 1)

	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertPodsByDeployment(t, ns, "web", map[string]map[string]int{"web": {v1: 6}, canaryName(ro): {v3: 3}})
	approveByStatus(t, ns, "web")
	waitRollout(t, ns, "web", "completed on v3", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted &&
			r.Status.CanaryStatus.CanaryRevision == ro.Status.CanaryStatus.CanaryRevision
	})
	waitDeploymentComplete(t, ns, "web", v3)
	assertNoCanary(t, ns, "web")
	assertRestored(t, ns, "web")
}

// Given a canary-style release paused at step 2 (50% of 10: 5 canary pods)
// When the stable Deployment is scaled to 4, then to 16, through its scale
// subresource (as an HPA does)
// Then the canary keeps its 5 pods when the stable shrinks (a canary never
// scales down during a release) and grows to 8 (50% of 16) when it grows.
func TestCanaryDeployment_scaledMidRelease_canaryOnlyGrows(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 10, v1)
	createRollout(t, canaryRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	ro := waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)

	scaleDeployment(t, ns, "web", 4)
	eventually(t, "the batch re-planned for 4 replicas", func() (bool, string) {
		br := &rolloutsv1beta1.BatchRelease{}
		if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "web"}, br); err != nil {
			return false, err.Error()
		}
		got := podsByDeployment(t, ns, "web")
		return br.Status.ObservedWorkloadReplicas == 4 && br.Status.CanaryStatus.CurrentBatchState == rolloutsv1beta1.ReadyBatchState &&
			got["web"][v1] == 4, fmt.Sprintf("batchrelease %+v pods %v", br.Status, got)
	})
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertPodsByDeployment(t, ns, "web", map[string]map[string]int{"web": {v1: 4}, canaryName(ro): {v2: 5}})
	assertCanaryHeld(t, ns, "web", ro, 5)

	scaleDeployment(t, ns, "web", 16)
	eventually(t, "8 canary pods for 16 replicas", func() (bool, string) {
		got := podsByDeployment(t, ns, "web")
		return fmt.Sprint(got) == fmt.Sprint(map[string]map[string]int{"web": {v1: 16}, canaryName(ro): {v2: 8}}), fmt.Sprint(got)
	})
	assertCanaryHeld(t, ns, "web", ro, 8)
}

// Given a canary-style release paused at step 1
// When sluice is stopped and started again, and the step is approved
// Then the release goes on with the canary Deployment it had created (the
// same object, found by its name), never a second one.
func TestCanaryDeployment_sluiceRestartedMidRelease_keepsItsCanary(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	createRollout(t, canaryRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	ro := waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	before := getDeployment(t, ns, canaryName(ro))

	if err := suite.manager.Stop(); err != nil {
		t.Fatalf("stopping sluice: %v", err)
	}
	if err := startManager(ctxFor(t)); err != nil {
		t.Fatalf("restarting sluice: %v", err)
	}
	approveByStatus(t, ns, "web")
	ro = waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	assertCanaryHeld(t, ns, "web", ro, 2)
	if after := getDeployment(t, ns, canaryName(ro)); after.UID != before.UID {
		t.Fatalf("the canary was replaced across the restart: uid %s, was %s", after.UID, before.UID)
	}
	assertPodsByDeployment(t, ns, "web", map[string]map[string]int{"web": {v1: 4}, canaryName(ro): {v2: 2}})
}

// Given a canary-style release paused at step 1 and sluice stopped
// When a user resumes the stable Deployment by hand (kubectl rollout
// resume)
// Then Kubernetes updates the stable Deployment alone, and once sluice is
// back it deletes the canary, completes the Rollout and restores the
// stable Deployment.
func TestCanaryDeployment_resumedByHandWhileSluiceDown_completesAndRemovesCanary(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	createRollout(t, canaryRollout(ns, "web", step("1", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	ro := waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)

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
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	if err := suite.c.Patch(ctxFor(t), d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":false}}`)), client.FieldOwner("kubectl-rollout")); err != nil {
		t.Fatalf("resuming by hand: %v", err)
	}
	eventually(t, "the stable deployment updated by Kubernetes alone", func() (bool, string) {
		got := podsByDeployment(t, ns, "web")
		return fmt.Sprint(got) == fmt.Sprint(map[string]map[string]int{"web": {v2: 4}, canaryName(ro): {v2: 1}}), fmt.Sprint(got)
	})

	restarted = true
	if err := startManager(ctxFor(t)); err != nil {
		t.Fatalf("restarting sluice: %v", err)
	}
	waitRollout(t, ns, "web", "completed after restart", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	assertNoCanary(t, ns, "web")
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")
}

// scaleDeployment scales a Deployment through its scale subresource.
func scaleDeployment(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
	if err := suite.c.SubResource("scale").Patch(ctxFor(t), d, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("scaling %s to %d: %v", name, replicas, err)
	}
}

// canaryRollout is newRollout in canary style: an extra canary Deployment.
func canaryRollout(ns, name string, steps ...rolloutsv1beta1.CanaryStep) *rolloutsv1beta1.Rollout {
	ro := newRollout(ns, name, steps...)
	ro.Spec.Strategy.Canary.EnableExtraWorkloadForCanary = true
	return ro
}

// canaryName is the canary Deployment of the revision ro is releasing.
func canaryName(ro *rolloutsv1beta1.Rollout) string {
	return canarydeployment.Name(ro.Spec.WorkloadRef.Name, ro.Status.CanaryStatus.CanaryRevision)
}

// podsByDeployment counts the live pods of app by the Deployment that owns
// them (through its ReplicaSet) and by image.
func podsByDeployment(t *testing.T, ns, app string) map[string]map[string]int {
	t.Helper()
	sets := &appsv1.ReplicaSetList{}
	if err := suite.c.List(ctxFor(t), sets, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing replicasets: %v", err)
	}
	owner := map[types.UID]string{}
	for i := range sets.Items {
		if ref := metav1.GetControllerOf(&sets.Items[i]); ref != nil {
			owner[sets.Items[i].UID] = ref.Name
		}
	}
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	out := map[string]map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		d := "<no owner>"
		if ref := metav1.GetControllerOf(&p); ref != nil && owner[ref.UID] != "" {
			d = owner[ref.UID]
		}
		if out[d] == nil {
			out[d] = map[string]int{}
		}
		out[d][p.Spec.Containers[0].Image]++
	}
	return out
}

func assertPodsByDeployment(t *testing.T, ns, app string, want map[string]map[string]int) {
	t.Helper()
	if got := podsByDeployment(t, ns, app); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pods by deployment and image: %v, want %v", got, want)
	}
}

// podNames lists the live pods of the Deployment name (without canary pods).
func podNames(t *testing.T, ns, name string) []string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	var out []string
	for _, p := range pods.Items {
		if _, canary := p.Labels[canarydeployment.Label]; p.DeletionTimestamp == nil && !canary {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}

// podTemplateHashes lists the distinct pod-template-hash labels of the pods
// of the Deployment name.
func podTemplateHashes(t *testing.T, ns, name string) []string {
	t.Helper()
	d := getDeployment(t, ns, name)
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range pods.Items {
		if h := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// assertCanaryHeld checks the stable and canary Deployments between steps:
// the stable paused with its own strategy and sluice's marks, exactly one
// canary (of the revision being released) sized for the step, owned by the
// stable, not paused, and with a selector of its own.
func assertCanaryHeld(t *testing.T, ns, name string, ro *rolloutsv1beta1.Rollout, replicas int32) {
	t.Helper()
	d := getDeployment(t, ns, name)
	ru := d.Spec.Strategy.RollingUpdate
	if !d.Spec.Paused || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil ||
		ru.MaxSurge.String() != "25%" || ru.MaxUnavailable.String() != "25%" || d.Spec.MinReadySeconds != 0 {
		t.Fatalf("stable deployment between steps: paused=%v strategy=%+v minReadySeconds=%d replicas=%d",
			d.Spec.Paused, d.Spec.Strategy, d.Spec.MinReadySeconds, *d.Spec.Replicas)
	}
	if _, ok := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]; !ok {
		t.Fatalf("stable deployment has no %s annotation", rolloutsv1beta1.DeploymentOriginalAnnotation)
	}
	if got := d.Labels[rolloutsv1beta1.StableRevisionLabel]; got == "" || got != ro.Status.CanaryStatus.StableRevision {
		t.Fatalf("stable-revision label %q, rollout stable revision %q", got, ro.Status.CanaryStatus.StableRevision)
	}
	canaries := canaryDeployments(t, ns, name)
	if len(canaries) != 1 || canaries[0].Name != canaryName(ro) {
		t.Fatalf("canary deployments %v, want only %s", deploymentNames(canaries), canaryName(ro))
	}
	c := canaries[0]
	if *c.Spec.Replicas != replicas || c.Spec.Paused {
		t.Fatalf("canary replicas %d paused %v, want %d and not paused", *c.Spec.Replicas, c.Spec.Paused, replicas)
	}
	if ref := c.OwnerReferences; len(ref) != 1 || ref[0].UID != d.UID {
		t.Fatalf("canary owner references %+v, want the stable deployment", ref)
	}
	if c.Spec.Selector.MatchLabels[canarydeployment.Label] != name || c.Spec.Selector.MatchLabels["app"] != name {
		t.Fatalf("canary selector %+v", c.Spec.Selector)
	}
}

// assertPatchedMetadataOnCanaryPodsOnly checks that patchPodTemplateMetadata
// reached every canary pod and no stable pod.
func assertPatchedMetadataOnCanaryPodsOnly(t *testing.T, ns, app, canary string) {
	t.Helper()
	pods := &corev1.PodList{}
	if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	byDeployment := podsByDeployment(t, ns, app)
	var onCanary int
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		isCanary := p.Labels[canarydeployment.Label] == app
		patched := p.Labels["track"] == "canary" && p.Annotations["example.com/canary"] == "true"
		_, anyPatch := p.Labels["track"]
		switch {
		case isCanary && !patched:
			t.Fatalf("canary pod %s lacks the patched metadata: labels %v annotations %v", p.Name, p.Labels, p.Annotations)
		case !isCanary && anyPatch:
			t.Fatalf("stable pod %s has the patched label: %v", p.Name, p.Labels)
		case isCanary:
			onCanary++
		}
	}
	want := 0
	for _, n := range byDeployment[canary] {
		want += n
	}
	if onCanary == 0 || onCanary != want {
		t.Fatalf("%d pods with the patched metadata, want the canary's %d", onCanary, want)
	}
}

func canaryDeployments(t *testing.T, ns, stable string) []appsv1.Deployment {
	t.Helper()
	list := &appsv1.DeploymentList{}
	if err := suite.c.List(ctxFor(t), list, client.InNamespace(ns), client.MatchingLabels{canarydeployment.Label: stable}); err != nil {
		t.Fatalf("listing canary deployments: %v", err)
	}
	return list.Items
}

func deploymentNames(ds []appsv1.Deployment) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}

// assertNoCanary waits until no canary Deployment of stable and none of
// their pods is left.
func assertNoCanary(t *testing.T, ns, stable string) {
	t.Helper()
	eventually(t, "no canary deployment or pod left", func() (bool, string) {
		canaries := canaryDeployments(t, ns, stable)
		pods := &corev1.PodList{}
		if err := suite.c.List(ctxFor(t), pods, client.InNamespace(ns), client.MatchingLabels{canarydeployment.Label: stable}); err != nil {
			return false, err.Error()
		}
		return len(canaries) == 0 && len(pods.Items) == 0,
			fmt.Sprintf("canary deployments %v, canary pods %d", deploymentNames(canaries), len(pods.Items))
	})
}
