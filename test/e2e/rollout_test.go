package e2e

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
)

const (
	v1 = "registry.example/shop/web:v1"
	v2 = "registry.example/shop/web:v2"
	v3 = "registry.example/shop/web:v3"
)

// Given a Deployment of 10 pods and a Rollout with steps 1 / 50% / 100%
// When the image changes and each paused step is approved the way
// kubectl-kruise does it
// Then each step runs exactly its planned pods on the new revision, within
// the Deployment's maxSurge and maxUnavailable, and the Deployment ends
// fully updated, unpaused and exactly as it was configured.
func TestRollout_multiBatch_approvedByStatusPatch(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 10, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil)))

	capacity := watchCapacity(t, ns, "web")
	setImage(t, ns, "web", v2)

	ro := waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "web"); got[v2] != 1 || got[v1] != 9 {
		t.Fatalf("step 1: pods by image %v, want 1 new and 9 old", got)
	}
	assertHeld(t, ns, "web")
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || ro.Status.CanaryStatus.CanaryReadyReplicas != 1 {
		t.Fatalf("step 1 status: %s", describe(ro))
	}

	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)
	if got := podImages(t, ns, "web"); got[v2] != 5 || got[v1] != 5 {
		t.Fatalf("step 2: pods by image %v, want 5 new and 5 old", got)
	}
	assertHeld(t, ns, "web")

	approveByStatus(t, ns, "web")
	ro = waitRollout(t, ns, "web", "completed", func(ro *rolloutsv1beta1.Rollout) bool {
		return ro.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && ro.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")
	if c := condition(ro, rolloutsv1beta1.RolloutConditionSucceeded); c == nil || c.Status != "True" {
		t.Fatalf("Succeeded condition %+v", c)
	}
	// maxSurge 25% of 10 rounds up to 3, maxUnavailable rounds down to 2.
	if err := capacity.within(13, 8); err != nil {
		t.Fatalf("capacity during the release: %v", err)
	}
	records, err := approval.Records(getRollout(t, ns, "web").Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil || len(records) != 2 || records[0].Via != "status" || records[0].By != "kubectl-kruise" || records[1].Step != 2 {
		t.Fatalf("approval records %+v, %v", records, err)
	}
}

// Given a release paused at step 1
// When an approval names another revision, and then one names this revision
// Then only the second advances the release, and it records who gave it.
func TestRollout_approvedByAnnotation_recordsWhoApproved(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	ro := waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)

	if err := annotate(t, ns, "web", rolloutsv1beta1.ApproveAnnotation, "step=1,revision=not-this-one"); err != nil {
		t.Fatal(err)
	}
	if err := annotate(t, ns, "web", "touch", "1"); err != nil { // another write: the stale approval is seen again
		t.Fatal(err)
	}
	waitRollout(t, ns, "web", "still paused after a stale approval", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Generation == r.Status.ObservedGeneration && r.Annotations["touch"] == "1" && r.ResourceVersion != ro.ResourceVersion
	})
	if got := getRollout(t, ns, "web"); got.Status.CurrentStepIndex != 1 || got.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("a stale approval advanced the release: %s", describe(got))
	}

	if err := annotate(t, ns, "web", rolloutsv1beta1.ApproveAnnotation, "1"); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	got := getRollout(t, ns, "web")
	records, err := approval.Records(got.Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil || len(records) != 1 {
		t.Fatalf("approval records %+v, %v", records, err)
	}
	r := records[0]
	if r.Via != "annotation" || r.Step != 1 || r.Revision != ro.Status.CanaryStatus.CanaryRevision || r.By == "" || r.At == nil {
		t.Fatalf("approval record %+v, want step 1 of %s with who and when", r, ro.Status.CanaryStatus.CanaryRevision)
	}
}

// Given a Rollout whose first step pauses for 2 seconds
// When the image changes
// Then the release goes through without any approval.
func TestRollout_timedPause_advancesByItself(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 4, v1)
	createRollout(t, newRollout(ns, "web", step("25%", ptr[int32](2)), step("100%", ptr[int32](0))))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	waitRollout(t, ns, "web", "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	waitDeploymentComplete(t, ns, "web", v2)
	assertRestored(t, ns, "web")
}

// Given a release paused at step 2 of 3
// When the image is set back to the stable revision
// Then the release is rolled back at once, without going through steps,
// and the Deployment is restored and runs only the stable revision.
func TestRollout_rollbackMidStep_completesAtOnce(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 6, v1)
	createRollout(t, newRollout(ns, "web", step("1", nil), step("50%", nil), step("100%", nil)))
	setImage(t, ns, "web", v2)
	waitStep(t, ns, "web", 1, rolloutsv1beta1.CanaryStepStatePaused)
	approveByStatus(t, ns, "web")
	waitStep(t, ns, "web", 2, rolloutsv1beta1.CanaryStepStatePaused)

	setImage(t, ns, "web", v1)
	ro := waitRollout(t, ns, "web", "rolled back", func(r *rolloutsv1beta1.Rollout) bool {
		c := condition(r, rolloutsv1beta1.RolloutConditionSucceeded)
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && c != nil && c.Status == "False"
	})
	waitDeploymentComplete(t, ns, "web", v1)
	assertRestored(t, ns, "web")
	if ro.Status.CurrentStepIndex != 2 {
		t.Fatalf("rollback went through steps: %s", describe(ro))
	}
}

// Given a Deployment that is already up to date
// When a Rollout is created for it
// Then nothing about the Deployment changes but the workload-type label, and
// the Rollout reports Healthy with a completed release of the current
// revision.
func TestRollout_createdForUpToDateWorkload_changesNothing(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 3, v1)
	before := getDeployment(t, ns, "web")
	createRollout(t, newRollout(ns, "web", step("1", nil), step("100%", nil)))
	ro := waitRollout(t, ns, "web", "labelled workload", func(*rolloutsv1beta1.Rollout) bool {
		return getDeployment(t, ns, "web").Labels[rolloutsv1beta1.WorkloadTypeLabel] == "deployment"
	})
	after := getDeployment(t, ns, "web")
	if after.Generation != before.Generation || after.Spec.Paused {
		t.Fatalf("deployment changed: generation %d -> %d, paused %v", before.Generation, after.Generation, after.Spec.Paused)
	}
	cs := ro.Status.CanaryStatus
	if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseHealthy || cs == nil || cs.CurrentStepState != rolloutsv1beta1.CanaryStepStateCompleted {
		t.Fatalf("rollout status %s", describe(ro))
	}
	if _, err := suite.c.RESTMapper().RESTMapping(appsv1.SchemeGroupVersion.WithKind("Deployment").GroupKind()); err != nil {
		t.Fatal(err)
	}
}

// Given a release paused at step 1 and sluice stopped
// When a user unpauses the Deployment by hand
// Then Kubernetes alone finishes the rollout without downtime, and once
// sluice is back the Rollout completes and the Deployment is restored.
func TestRollout_sluiceStoppedMidRelease_kubernetesFinishesAlone(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, "web", 8, v1)
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
	capacity := watchCapacity(t, ns, "web")
	d := getDeployment(t, ns, "web")
	t.Logf("unpausing by hand: paused=%v strategy=%+v minReadySeconds=%d", d.Spec.Paused, d.Spec.Strategy.RollingUpdate, d.Spec.MinReadySeconds)
	d.Spec.Paused = false
	if err := suite.c.Update(ctxFor(t), d); err != nil {
		t.Fatalf("unpausing by hand: %v", err)
	}
	waitDeploymentComplete(t, ns, "web", v2)
	// While held, maxSurge is 0 and maxUnavailable the user's 2 (25% of 8).
	if err := capacity.within(8, 6); err != nil {
		t.Fatalf("capacity while Kubernetes finished alone: %v", err)
	}

	restarted = true
	if err := startManager(ctxFor(t)); err != nil {
		t.Fatalf("restarting sluice: %v", err)
	}
	waitRollout(t, ns, "web", "completed after restart", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	eventually(t, "deployment restored", func() (bool, string) {
		d := getDeployment(t, ns, "web")
		_, held := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
		return !held, strings.Join([]string{d.Spec.Strategy.RollingUpdate.MaxSurge.String()}, "")
	})
	assertRestored(t, ns, "web")
}
