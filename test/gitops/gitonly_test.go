package gitops

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// Story: a GitGate without spec.github works from Git alone. Its
// CommitStatuses condition says statuses are off; a trailer approves step
// 1; a git revert rolls the release back and, once synced, hands the
// workload back on v1. No status is posted anywhere.
func TestGitGate_withoutGitHub_trailersAndRevertsWorkFromGitAlone(t *testing.T) {
	w := newWorld(t, func(g *gitopsv1alpha1.GitGate) { g.Spec.GitHub = nil })
	c := apimeta.FindStatusCondition(w.waitGate("CommitStatuses off", func(g *gitopsv1alpha1.GitGate) bool {
		c := apimeta.FindStatusCondition(g.Status.Conditions, "CommitStatuses")
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "NoSCMHost"
	}).Status.Conditions, "CommitStatuses")
	if want := "no spec.scm nor spec.github: commit statuses are off"; len(c.Message) < len(want) || c.Message[:len(want)] != want {
		t.Errorf("CommitStatuses says %q, want it to start with %q", c.Message, want)
	}

	merge := w.commit("main", "Bump checkout to v2", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)

	// A trailer by the release manager approves step 1 (not by the author
	// of the change: an author cannot approve their own release).
	approve, err := w.repo.Commit("main", gitserver.Change{Message: "Approve\n\n" + git.TrailerApprove + ": " + w.ns + "/checkout step=1 revision=" + merge[:10],
		Files: map[string]string{"NOTES.md": "approve\n"}, Author: &object.Signature{Name: "Release Manager", Email: "rm@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = approve
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(2, 2)
	if got := w.approvals(); len(got) != 1 || got[0].Via != "git-trailer" || got[0].Step != 1 || got[0].By != "rm@example.com" {
		t.Fatalf("approvals = %+v, want step 1 via git-trailer by rm@example.com", got)
	}

	// A revert rolls it back, before and after the sync.
	revert, err := w.repo.Revert("main", merge, gitserver.RevertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.waitApplied(revert)
	w.waitRollout("Healthy on v1 after the revert", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.Aborted == nil
	})
	w.waitDeployment("v1", 4)
	for _, sha := range []string{merge, approve, revert} {
		if s := w.gh.Statuses(ghRepo, sha); len(s) != 0 {
			t.Errorf("statuses on %s: %+v, want none without spec.github", sha[:12], s)
		}
	}
}

// Story: a revert pushed with Flux running is synced at once, racing the
// abort it triggers. The merge still ends "rolled back by <revert>" and the
// revert's status turns success: neither is left pending.
func TestGitGate_revertSyncedWhileTheAbortRuns_statusesFinish(t *testing.T) {
	w := newWorld(t, nil)
	_, merge := w.mergePullRequest("Bump checkout to v2", "dev", "dev", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)
	w.waitStatus(merge, "pending", pausedAtOne)

	revert, err := w.shared().Revert(merge)
	if err != nil {
		t.Fatal(err)
	}
	w.waitApplied(revert)
	w.waitRollout("Healthy after the revert", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.Aborted == nil
	})
	w.waitDeployment("v1", 4)
	w.waitStatus(merge, "failure", "rolled back by "+revert[:12])
	w.waitStatus(revert, "success", "rolled back "+merge[:12]+": stable revision restored")
}
