package plugin

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Given a blue-green Rollout of a Deployment of 4 pods, steps 50% / 100%,
// whose progress is in status.blueGreenStatus
// When its image changes and the release pauses at step 1
// Then get and status read the release from blueGreenStatus (all 4 old
// pods and 2 new ones, the current step marked, the approve command), and
// approve pins the approval to the updated revision; the last step pauses
// with every old pod beside the new ones (blue-green, as in OpenKruise) and
// its approval completes the release, each recorded as the admin's approval
// via the annotation.
func TestPlugin_blueGreenRelease_readAndApprovedFromBlueGreenStatus(t *testing.T) {
	ns := newNamespace(t)
	deployment(t, ns, 4, v1)
	createRollout(t, ns, "apps/v1", "Deployment", rolloutsv1beta1.RolloutStrategy{BlueGreen: &rolloutsv1beta1.BlueGreenStrategy{
		Steps: []rolloutsv1beta1.CanaryStep{step("50%", nil), step("100%", nil)},
	}})
	setImage(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, v2)
	ro := waitStep(t, ns, 1, rolloutsv1beta1.CanaryStepStatePaused)
	if ro.Status.BlueGreenStatus == nil || ro.Status.CanaryStatus != nil {
		t.Fatalf("the release is not in blueGreenStatus: %+v", ro.Status)
	}
	waitPods(t, ns, map[string]int{v1: 4, v2: 2})
	rev, stable := revisionOf(ro), ro.Status.BlueGreenStatus.StableRevision

	assertContains(t, "get", mustSluice(t, "get", "rollouts", "-n", ns), "web Progressing 1/2 StepPaused Deployment/web "+rev+" 2/4")
	assertContains(t, "status", mustSluice(t, "status", "web", "-n", ns),
		"Workload: Deployment/web (apps/v1), blue-green",
		"Revisions: stable "+stable+", new "+rev,
		"=> 1 replicas 50% pause until approved StepPaused",
		stable+" stable 4 4 app="+v1,
		" new 2 2 app="+v2,
		"kubectl sluice approve web -n "+ns)

	out := mustSluice(t, "approve", "web", "-n", ns)
	assertContains(t, "approve", out,
		"step 1 of revision "+rev+" approved by sluice-admin (sluice.dev/approve=step=1,revision="+rev+")",
		"sluice applied step 1 of revision "+rev+", approved by sluice-admin via annotation")
	// The last step of a blue-green release pauses too, with every old pod
	// still running.
	waitStep(t, ns, 2, rolloutsv1beta1.CanaryStepStatePaused)
	waitPods(t, ns, map[string]int{v1: 4, v2: 4})
	assertContains(t, "approve step 2", mustSluice(t, "approve", "web", "-n", ns),
		"sluice applied step 2 of revision "+rev+", approved by sluice-admin via annotation")
	ro = waitRollout(t, ns, "completed", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
	if r := records(t, ro); len(r) != 2 || r[0].Revision != rev || r[0].Step != 1 || r[0].By != "sluice-admin" || r[0].Via != "annotation" || r[1].Step != 2 {
		t.Fatalf("approval record: %+v", r)
	}
	waitPods(t, ns, map[string]int{v2: 4})
}
