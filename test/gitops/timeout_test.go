package gitops

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Story: a step that nobody approves in time. The GitGate gives a paused
// step 5 seconds (spec.approval.stepTimeout) and aborts after it (the
// default onStepTimeout). A merge is released and paused at step 1; no
// label comes: the release is aborted by sluice via approval-timeout, every
// pod back on v1 while the pod template stays v2 (Git's), the merge commit
// shows the failure, and Flux re-applying the commit releases nothing.
func TestGitGate_stepTimeout_abortsWhenNoApprovalComesInTime(t *testing.T) {
	w := newWorld(t, func(g *gitopsv1alpha1.GitGate) {
		g.Spec.Approval.StepTimeout = &metav1.Duration{Duration: 5 * time.Second}
	})
	_, merge := w.mergePullRequest("Bump checkout to v2", "dev", "dev", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)

	w.waitAborted()
	if ab := w.rollout().Status.Aborted; ab.By != "sluice" || ab.Via != "approval-timeout" || ab.Step != 1 {
		t.Fatalf("abort record %+v, want step 1 by sluice via approval-timeout", ab)
	}
	w.waitPods("v1", 4)
	w.assertTemplate("v2")
	w.waitStatus(merge, "failure", "aborted at step 1/3 by sluice")
	w.reapplied(merge)
	w.assertStaysAborted("v1", 4)
}
