package daemonset

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a DaemonSet on 6 nodes (maxUnavailable 2) and a Rollout with steps
// 1 / 50% / 100%
// When the image changes and each paused step is approved the way
// kubectl-kruise does it
// Then each step runs exactly its planned pods on the new revision with the
// DaemonSet held on OnDelete, never more than 2 nodes lack a ready pod, and
// the DaemonSet ends with every pod new and exactly its own strategy back.
func TestDaemonSet_multiBatch_approvedStepByStep(t *testing.T) {
	ns := newNamespace(t)
	daemonSet(t, ns, "agent", v1)
	createRollout(t, newRollout(ns, "agent", step("1"), step("50%"), step("100%")))

	availability := watchAvailability(t, ns, "agent")
	setImage(t, ns, "agent", v2)
	assertHeld(t, ns, "agent")

	ro := waitStep(t, ns, "agent", 1, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "agent"); got[v2] != 1 || got[v1] != 5 {
		t.Fatalf("step 1: pods by image %v, want 1 new and 5 old", got)
	}
	assertHeld(t, ns, "agent")
	cs := ro.Status.CanaryStatus
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || cs.CanaryReplicas != 1 || cs.CanaryReadyReplicas != 1 ||
		cs.StableRevision == "" || cs.StableRevision == cs.CanaryRevision {
		t.Fatalf("step 1 status: %s", describe(ro))
	}
	if got := getDaemonSet(t, ns, "agent").Labels[rolloutsv1beta1.StableRevisionLabel]; got != cs.StableRevision {
		t.Fatalf("stable-revision label %q, want %q", got, cs.StableRevision)
	}

	approveByStatus(t, ns, "agent")
	waitStep(t, ns, "agent", 2, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "agent"); got[v2] != 3 || got[v1] != 3 {
		t.Fatalf("step 2: pods by image %v, want 3 new and 3 old", got)
	}
	assertHeld(t, ns, "agent")

	approveByStatus(t, ns, "agent")
	ro = waitCompleted(t, ns, "agent", "True")
	if ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStateCompleted || ro.Status.CurrentStepIndex != 3 {
		t.Fatalf("completed status: %s", describe(ro))
	}
	waitDaemonSetComplete(t, ns, "agent", v2)
	assertRestored(t, ns, "agent")
	if err := availability.within(2); err != nil {
		t.Fatalf("availability during the release: %v", err)
	}
}

// Given a DaemonSet with a paused Rollout (spec.strategy.paused)
// When the image changes
// Then the update is held: the DaemonSet switches to OnDelete and its
// controller, having seen the new template, replaces no pod; once the
// Rollout is resumed, step 1 replaces exactly one.
func TestDaemonSet_updateHeld_noPodChangesUntilResumed(t *testing.T) {
	ns := newNamespace(t)
	daemonSet(t, ns, "agent", v1)
	ro := newRollout(ns, "agent", step("1"), step("100%"))
	ro.Spec.Strategy.Paused = true
	createRollout(t, ro)

	setImage(t, ns, "agent", v2)
	assertHeld(t, ns, "agent")
	waitRollout(t, ns, "agent", "paused mid-release", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionProgressing)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseProgressing && c != nil && c.Reason == rolloutsv1beta1.ProgressingReasonPaused
	})
	eventually(t, "the DaemonSet controller to see the new template", func() (bool, string) {
		ds := getDaemonSet(t, ns, "agent")
		return ds.Status.ObservedGeneration >= ds.Generation, describeStatus(ds)
	})
	if got := podImages(t, ns, "agent"); got[v1] != nodes || len(got) != 1 {
		t.Fatalf("held update: pods by image %v, want all %d old", got, nodes)
	}
	if ds := getDaemonSet(t, ns, "agent"); ds.Status.UpdatedNumberScheduled != 0 || ds.Status.NumberAvailable != nodes {
		t.Fatalf("held update: status %s", describeStatus(ds))
	}

	resume := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"}}
	if err := suite.c.Patch(ctxFor(t), resume, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"strategy":{"paused":false}}}`))); err != nil {
		t.Fatal(err)
	}
	waitStep(t, ns, "agent", 1, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "agent"); got[v2] != 1 || got[v1] != nodes-1 {
		t.Fatalf("step 1 after resuming: pods by image %v, want 1 new", got)
	}
	assertHeld(t, ns, "agent")
}

// Given a release paused at step 2 of 3 (3 new pods, 3 old)
// When the image is set back to the stable revision
// Then the release is rolled back at once, without going through steps:
// the DaemonSet gets its RollingUpdate strategy back, which replaces the new
// pods, and every pod runs the stable revision.
func TestDaemonSet_rollbackMidRelease_completesOnTheStableRevision(t *testing.T) {
	ns := newNamespace(t)
	daemonSet(t, ns, "agent", v1)
	createRollout(t, newRollout(ns, "agent", step("1"), step("50%"), step("100%")))
	setImage(t, ns, "agent", v2)
	waitStep(t, ns, "agent", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "agent")
	ro := waitStep(t, ns, "agent", 2, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "agent"); got[v2] != 3 || got[v1] != 3 {
		t.Fatalf("step 2: pods by image %v, want 3 new and 3 old", got)
	}
	stable := ro.Status.CanaryStatus.StableRevision

	availability := watchAvailability(t, ns, "agent")
	setImage(t, ns, "agent", v1)
	ro = waitCompleted(t, ns, "agent", "False")
	if ro.Status.CurrentStepIndex != 2 || ro.Status.CanaryStatus.CanaryRevision != stable {
		t.Fatalf("rollback: status %s, want step 2 kept and revision %s", describe(ro), stable)
	}
	waitDaemonSetComplete(t, ns, "agent", v1)
	assertRestored(t, ns, "agent")
	if err := availability.within(2); err != nil {
		t.Fatalf("availability during the rollback: %v", err)
	}
}

// Given a release paused at step 1 (1 new pod, 5 old)
// When the Rollout is deleted
// Then the DaemonSet is handed back: its own RollingUpdate strategy
// replaces the other pods, it keeps nothing of sluice's (not even the
// workload-type label), and the Rollout goes away.
func TestDaemonSet_rolloutDeletedMidRelease_handsTheDaemonSetBack(t *testing.T) {
	ns := newNamespace(t)
	daemonSet(t, ns, "agent", v1)
	createRollout(t, newRollout(ns, "agent", step("1"), step("100%")))
	setImage(t, ns, "agent", v2)
	ro := waitStep(t, ns, "agent", 1, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "agent"); got[v2] != 1 || got[v1] != nodes-1 {
		t.Fatalf("step 1: pods by image %v, want 1 new", got)
	}

	if err := suite.c.Delete(ctxFor(t), ro); err != nil {
		t.Fatal(err)
	}
	eventually(t, "rollout gone", func() (bool, string) {
		err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: ns, Name: "agent"}, &rolloutsv1beta1.Rollout{})
		return apierrors.IsNotFound(err), "get: " + errString(err)
	})
	waitDaemonSetComplete(t, ns, "agent", v2)
	assertRestored(t, ns, "agent")
	if _, ok := getDaemonSet(t, ns, "agent").Labels[rolloutsv1beta1.WorkloadTypeLabel]; ok {
		t.Errorf("workload-type label left after the Rollout was deleted")
	}
}

// Given a release paused at step 1 and sluice stopped
// When a user applies the DaemonSet's sluice.dev/restore-patch by hand
// Then the DaemonSet has its own strategy back at once and its controller
// finishes the rollout; once sluice is back the Rollout completes without
// holding the DaemonSet again.
func TestDaemonSet_restorePatchAppliedByHand_completesWhenSluiceReturns(t *testing.T) {
	ns := newNamespace(t)
	daemonSet(t, ns, "agent", v1)
	createRollout(t, newRollout(ns, "agent", step("1"), step("100%")))
	setImage(t, ns, "agent", v2)
	waitStep(t, ns, "agent", 1, rolloutsv1beta1.CanaryStepStatePaused)

	if err := suite.manager.Stop(); err != nil {
		t.Fatalf("stopping sluice: %v", err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			if err := restartManager(t); err != nil {
				t.Errorf("restarting sluice: %v", err)
			}
		}
	})
	ds := getDaemonSet(t, ns, "agent")
	patch := ds.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
	if err := suite.c.Patch(ctxFor(t), ds, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("kubectl-patch")); err != nil {
		t.Fatalf("applying the restore patch: %v", err)
	}
	assertRestored(t, ns, "agent")
	waitDaemonSetComplete(t, ns, "agent", v2)

	restarted = true
	if err := restartManager(t); err != nil {
		t.Fatalf("restarting sluice: %v", err)
	}
	waitCompleted(t, ns, "agent", "True")
	assertRestored(t, ns, "agent")
}

// Given a release of v2 paused at step 1
// When the image changes to v3
// Then the release restarts at step 1 for v3 with the DaemonSet still held
// and v1 still the stable revision, and finishes with every pod on v3.
func TestDaemonSet_newRevisionMidRelease_restartsAtStepOne(t *testing.T) {
	ns := newNamespace(t)
	daemonSet(t, ns, "agent", v1)
	createRollout(t, newRollout(ns, "agent", step("1"), step("50%"), step("100%")))
	setImage(t, ns, "agent", v2)
	first := waitStep(t, ns, "agent", 1, rolloutsv1beta1.CanaryStepStatePaused)

	setImage(t, ns, "agent", v3)
	// The pods are part of the wait: the Rollout may report step 1 of v3
	// paused before its BatchRelease has restarted for v3 (the Rollout's
	// batch check does not compare the BatchRelease's revision).
	ro := waitRollout(t, ns, "agent", "step 1 of v3 paused", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.CurrentStepIndex == 1 && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused &&
			r.Status.CanaryStatus.CanaryRevision != first.Status.CanaryStatus.CanaryRevision &&
			r.Status.CanaryStatus.CanaryReadyReplicas == 1 && podImages(t, ns, "agent")[v3] == 1
	})
	if got := podImages(t, ns, "agent"); got[v3] != 1 || got[v3]+got[v2]+got[v1] != nodes {
		t.Fatalf("step 1 of v3: pods by image %v, want 1 on v3 of %d", got, nodes)
	}
	if ro.Status.CanaryStatus.StableRevision != first.Status.CanaryStatus.StableRevision {
		t.Fatalf("stable revision changed from %s to %s", first.Status.CanaryStatus.StableRevision, ro.Status.CanaryStatus.StableRevision)
	}
	assertHeld(t, ns, "agent")
	approveByStatus(t, ns, "agent")
	waitStep(t, ns, "agent", 2, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "agent"); got[v3] != 3 {
		t.Fatalf("step 2 of v3: pods by image %v, want 3 on v3", got)
	}
	approveByStatus(t, ns, "agent")
	waitCompleted(t, ns, "agent", "True")
	waitDaemonSetComplete(t, ns, "agent", v3)
	assertRestored(t, ns, "agent")
}

func restartManager(t *testing.T) error {
	t.Helper()
	m, err := startManager(ctxFor(t))
	if err != nil {
		return err
	}
	suite.manager = m
	return nil
}

func describeStatus(ds *appsv1.DaemonSet) string {
	b, _ := json.Marshal(ds.Status)
	return string(b)
}

func errString(err error) string {
	if err == nil {
		return "found"
	}
	return err.Error()
}
