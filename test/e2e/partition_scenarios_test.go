package e2e

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// The scenarios every partition kind goes through. A workload of 4 pods
// (a DaemonSet: one per node, 3 nodes) is released in steps 1 / 50% /
// 100%; ordinal kinds update from the highest ordinal down.

// scenarioMultiBatch:
// Given a workload on v1 and a paused Rollout with steps 1 / 50% / 100%
// When the image changes to v2
// Then the update is held (partition at the hold value, no pod changes,
// marked in progress, restore patch recorded) until the Rollout is
// resumed; each step then runs exactly its pods on v2 with the partition
// at replicas minus the step's pods; each approval moves on; and the
// release ends with every pod on v2 and the workload's update strategy
// exactly as it was, without sluice's annotations.
func scenarioMultiBatch(t *testing.T, k partitionKind, replicas int32, pods int) {
	ns := newNamespace(t)
	k.prepare(t, ns)
	createWorkload(t, k, ns, "app", replicas, v1, pods)
	original := getWorkload(t, k, ns, "app")
	originalSpec, _, _ := unstructured.NestedMap(original.Object, "spec")
	ro := rolloutFor(k, ns, "app", step("1", nil), step("50%", nil), step("100%", nil))
	ro.Spec.Strategy.Paused = true
	createRollout(t, ro)
	k.rolloutCreated(t)

	held := setWorkloadImage(t, k, ns, "app", v2)
	assertHeldAt(t, k, held, k.hold)
	eventually(t, "the workload's controller saw the held update", func() (bool, string) {
		u := getWorkload(t, k, ns, "app")
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		return observed >= u.GetGeneration(), fmt.Sprintf("generation %d observed %d", u.GetGeneration(), observed)
	})
	waitRollout(t, ns, "app", "paused", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionProgressing)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing && c != nil && c.Reason == rolloutsv1beta1.ProgressingReasonPaused
	})
	if got, _ := podImagesReady(t, ns, "app"); got[v1] != pods || len(got) != 1 {
		t.Fatalf("held: pods by image %v, want all %d on v1", got, pods)
	}
	assertHeldAt(t, k, getWorkload(t, k, ns, "app"), k.hold)

	resume(t, ns, "app")
	r := waitStep(t, ns, "app", 1, rolloutsv1beta1.CanaryStepStatePaused)
	assertPods(t, k, ns, "app", "step 1", afterStep(pods, 1))
	assertHeldAt(t, k, getWorkload(t, k, ns, "app"), int64(pods-1))
	if r.Status.CanaryStatus.CanaryReadyReplicas != 1 || r.Status.CanaryStatus.StableRevision == r.Status.CanaryStatus.CanaryRevision {
		t.Fatalf("step 1 status: %s", describe(r))
	}

	approveByStatus(t, ns, "app")
	waitStep(t, ns, "app", 2, rolloutsv1beta1.CanaryStepStatePaused)
	half := (pods + 1) / 2
	assertPods(t, k, ns, "app", "step 2", afterStep(pods, half))
	assertHeldAt(t, k, getWorkload(t, k, ns, "app"), int64(pods-half))

	approveByStatus(t, ns, "app")
	waitCompleted(t, ns, "app")
	waitPods(t, ns, "app", map[string]int{v2: pods})
	assertHandedBack(t, k, ns, "app", originalSpec, true)
}

// scenarioRollback:
// Given a release paused at step 2 of 3
// When the image is set back to v1
// Then the release is rolled back at once, without going through the
// steps: every pod runs v1 again and the workload is handed back as it
// was.
func scenarioRollback(t *testing.T, k partitionKind, replicas int32, pods int) {
	ns := newNamespace(t)
	k.prepare(t, ns)
	createWorkload(t, k, ns, "app", replicas, v1, pods)
	originalSpec, _, _ := unstructured.NestedMap(getWorkload(t, k, ns, "app").Object, "spec")
	createRollout(t, rolloutFor(k, ns, "app", step("1", nil), step("50%", nil), step("100%", nil)))
	k.rolloutCreated(t)
	setWorkloadImage(t, k, ns, "app", v2)
	waitStep(t, ns, "app", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "app")
	waitStep(t, ns, "app", 2, rolloutsv1beta1.CanaryStepStatePaused)
	if got, _ := podImagesReady(t, ns, "app"); got[v2] != (pods+1)/2 {
		t.Fatalf("step 2: pods by image %v", got)
	}

	setWorkloadImage(t, k, ns, "app", v1)
	ro := waitRollout(t, ns, "app", "rolled back", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && c.Status == "False"
	})
	if ro.Status.CurrentStepIndex != 2 {
		t.Fatalf("rollback went through steps: %s", describe(ro))
	}
	waitPods(t, ns, "app", map[string]int{v1: pods})
	assertHandedBack(t, k, ns, "app", originalSpec, true)
}

// scenarioDeleted:
// Given a release paused at step 1
// When the Rollout is deleted
// Then the workload is handed back (its own partition, no marks, no
// workload-type label) and its controller releases v2 to every pod.
func scenarioDeleted(t *testing.T, k partitionKind, replicas int32, pods int) {
	ns := newNamespace(t)
	k.prepare(t, ns)
	createWorkload(t, k, ns, "app", replicas, v1, pods)
	originalSpec, _, _ := unstructured.NestedMap(getWorkload(t, k, ns, "app").Object, "spec")
	createRollout(t, rolloutFor(k, ns, "app", step("1", nil), step("100%", nil)))
	k.rolloutCreated(t)
	setWorkloadImage(t, k, ns, "app", v2)
	ro := waitStep(t, ns, "app", 1, rolloutsv1beta1.CanaryStepStatePaused)
	assertHeldAt(t, k, getWorkload(t, k, ns, "app"), int64(pods-1))

	if err := suite.c.Delete(ctxFor(t), ro); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ns, "app")
	waitPods(t, ns, "app", map[string]int{v2: pods})
	// sluice removes the label it added; a custom kind's own label stays.
	assertHandedBack(t, k, ns, "app", originalSpec, k.resource != nil)
}

// afterStep is where the pods are once updated of them run v2: the
// highest ordinals on v2 (for kinds without ordinals only the counts
// matter).
func afterStep(pods, updated int) map[string][]int {
	want := map[string][]int{}
	for i := range pods {
		image := v1
		if i >= pods-updated {
			image = v2
		}
		want[image] = append(want[image], i)
	}
	return want
}

// resume sets spec.strategy.paused of a Rollout back to false.
func resume(t *testing.T, ns, name string) {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	ro.SetNamespace(ns)
	ro.SetName(name)
	patch := []byte(`{"spec":{"strategy":{"paused":false}}}`)
	if err := suite.c.Patch(ctxFor(t), ro, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl")); err != nil {
		t.Fatalf("resuming: %v", err)
	}
}

// scenarioRestoredByHand:
// Given a release paused at step 1 and sluice stopped
// When a user applies the workload's sluice.dev/restore-patch with one
// kubectl command
// Then the workload is handed back (its own partition, no marks) and its
// controller releases v2 to every pod; once sluice is back the Rollout
// completes without holding the workload again.
func scenarioRestoredByHand(t *testing.T, k partitionKind, replicas int32, pods int) {
	ns := newNamespace(t)
	k.prepare(t, ns)
	createWorkload(t, k, ns, "app", replicas, v1, pods)
	originalSpec, _, _ := unstructured.NestedMap(getWorkload(t, k, ns, "app").Object, "spec")
	createRollout(t, rolloutFor(k, ns, "app", step("1", nil), step("100%", nil)))
	k.rolloutCreated(t)
	setWorkloadImage(t, k, ns, "app", v2)
	waitStep(t, ns, "app", 1, rolloutsv1beta1.CanaryStepStatePaused)

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
	u := getWorkload(t, k, ns, "app")
	patch := u.GetAnnotations()[rolloutsv1beta1.DeploymentOriginalAnnotation]
	if err := suite.c.Patch(ctxFor(t), u, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("kubectl-patch")); err != nil {
		t.Fatalf("applying the restore patch: %v", err)
	}
	assertHandedBack(t, k, ns, "app", originalSpec, true)
	waitPods(t, ns, "app", map[string]int{v2: pods})

	restarted = true
	if err := startManager(ctxFor(t)); err != nil {
		t.Fatalf("restarting sluice: %v", err)
	}
	waitCompleted(t, ns, "app")
	assertHandedBack(t, k, ns, "app", originalSpec, true)
}

// scenarioNewRevision:
// Given a release of v2 paused at step 2
// When the image changes to v3
// Then the update is held again (no pod changes), and the release starts
// over at step 1 for v3 while the pods on v1 stay; it ends with every pod
// on v3.
func scenarioNewRevision(t *testing.T, k partitionKind, replicas int32, pods int) {
	ns := newNamespace(t)
	k.prepare(t, ns)
	createWorkload(t, k, ns, "app", replicas, v1, pods)
	originalSpec, _, _ := unstructured.NestedMap(getWorkload(t, k, ns, "app").Object, "spec")
	createRollout(t, rolloutFor(k, ns, "app", step("1", nil), step("50%", nil), step("100%", nil)))
	k.rolloutCreated(t)
	setWorkloadImage(t, k, ns, "app", v2)
	waitStep(t, ns, "app", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "app")
	v2Release := waitStep(t, ns, "app", 2, rolloutsv1beta1.CanaryStepStatePaused)

	assertHeldAt(t, k, setWorkloadImage(t, k, ns, "app", v3), k.hold)
	ro := waitRollout(t, ns, "app", "step 1 of v3 paused", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.CurrentStepIndex == 1 && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused &&
			r.Status.CanaryStatus.CanaryRevision != v2Release.Status.CanaryStatus.CanaryRevision
	})
	if ro.Status.CanaryStatus.StableRevision != v2Release.Status.CanaryStatus.StableRevision {
		t.Fatalf("stable revision %q after the restart, want v1's %q", ro.Status.CanaryStatus.StableRevision, v2Release.Status.CanaryStatus.StableRevision)
	}
	half := (pods + 1) / 2
	if k.ordinals {
		// The highest ordinal moves on to v3; the other v2 pods stay until
		// their batch.
		want := afterStep(pods, half)
		want[v3], want[v2] = want[v2][len(want[v2])-1:], want[v2][:len(want[v2])-1]
		assertPods(t, k, ns, "app", "step 1 of v3", want)
	} else {
		assertOnV3(t, ns, "step 1 of v3", 1, pods)
	}

	approveByStatus(t, ns, "app")
	waitStep(t, ns, "app", 2, rolloutsv1beta1.CanaryStepStatePaused)
	if k.ordinals {
		want := afterStep(pods, half)
		want[v3] = want[v2]
		delete(want, v2)
		assertPods(t, k, ns, "app", "step 2 of v3", want)
	} else {
		assertOnV3(t, ns, "step 2 of v3", half, pods)
	}

	approveByStatus(t, ns, "app")
	waitCompleted(t, ns, "app")
	waitPods(t, ns, "app", map[string]int{v3: pods})
	assertHandedBack(t, k, ns, "app", originalSpec, true)
}

// assertOnV3 checks that n of the pods run v3 and the others v1 or v2
// (which old pods a kind without ordinals updates first is its own
// choice).
func assertOnV3(t *testing.T, ns, step string, n, pods int) {
	t.Helper()
	got, _ := podImagesReady(t, ns, "app")
	if got[v3] != n || got[v1]+got[v2] != pods-n || len(got) > 3 {
		t.Fatalf("%s: pods by image %v, want %d on v3 and the others on v1 or v2", step, got, n)
	}
}
