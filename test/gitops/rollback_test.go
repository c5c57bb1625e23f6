package gitops

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/githubfake"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// Story 3: sluice/promote-full approves every remaining step; on the next
// release sluice/rollback sends every pod back to the stable revision at
// once and stops the release; the status turns failure "rolled back by
// <who>".
func TestGitGate_promoteFullAndRollbackLabels(t *testing.T) {
	w := newWorld(t, func(g *gitopsv1alpha1.GitGate) { g.Spec.GitHub.ProposeRevert = true })
	w.gh.SetRole(ghRepo, "lead", githubfake.RoleMaintain)
	w.gh.SetRole(ghRepo, "ops", githubfake.RoleWrite)

	// Given v2 merged, applied, paused at step 1.
	pr2, merge2 := w.mergePullRequest("Bump checkout to v2", "dev", "lead", map[string]string{manifest: deploymentYAML("v2")})
	w.fluxSync(merge2)
	ro := w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	canary2 := ro.Status.CanaryStatus.CanaryRevision
	w.waitStatus(merge2, "pending", "step 1/3 paused: add label sluice/approve to continue")

	// When the lead adds sluice/promote-full.
	w.afterPause()
	w.gh.AddLabel(ghRepo, pr2, "sluice/promote-full", "lead")

	// Then every step passes without stopping: all pods run v2, success.
	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.waitDeployment("v2", 4)
	w.waitStatus(merge2, "success", "released: 3/3 steps done")
	// The Rollout records each paused step it passed on the approval.
	got := w.approvals()
	if len(got) != 2 {
		t.Fatalf("approvals = %+v, want steps 1 and 2", got)
	}
	for i, a := range got {
		if a.Step != int32(i+1) || a.By != "lead" || a.Via != "github-label" || a.Revision != canary2 {
			t.Errorf("approval %d = %+v, want step %d of %s by lead via github-label", i, a, i+1, canary2)
		}
	}
	if a := w.getGate().Status.Rollouts[0].Approvals; len(a) != 1 || a[0].Action != "PromoteFull" || a[0].Step != 3 || a[0].By != "lead" {
		t.Errorf("gate approvals = %+v, want PromoteFull of step 3 by lead", a)
	}

	// Given v3 merged, applied, paused at step 1 with 1 pod of v3.
	pr3, merge3 := w.mergePullRequest("Bump checkout to v3", "dev", "lead", map[string]string{manifest: deploymentYAML("v3")})
	w.fluxSync(merge3)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.eventually("1 pod of v3", func() (bool, string) {
		pods := w.podsByImage()
		return pods["v2"] == 3 && pods["v3"] == 1, ""
	})

	// When ops adds sluice/rollback to the v3 pull request.
	w.gh.AddLabel(ghRepo, pr3, "sluice/rollback", "ops")

	// Then every pod is back on v2 at once, the release has stopped, and the
	// status on the v3 merge commit is failure "rolled back by ops".
	w.waitRollout("Healthy after rollback", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.waitDeployment("v2", 4)
	w.waitStatus(merge3, "failure", "rolled back by ops")
	w.waitEvent("Rollout", "checkout", "RolledBack", "by ops via github-label")
	if n := w.statusCount(merge3, "failure", "rolled back by ops"); n != 1 {
		t.Errorf("failure posted %d times, want once", n)
	}
	// And (opt-in) a pull request reverting the v3 merge is open, so that
	// Git converges.
	w.waitEvent("GitGate", "shop", "RevertProposed", "reverts "+merge3[:12])
	var revertPR *githubfake.PullRequestInfo
	for _, p := range w.gh.PullRequests(ghRepo) {
		if p.State == "open" && p.Base == "main" {
			revertPR = &p
		}
	}
	if revertPR == nil {
		t.Fatalf("no revert pull request open: %+v", w.gh.PullRequests(ghRepo))
	}
}

// Story 4: someone reverts the merge commit on the branch and pushes;
// sluice sees the revert before the GitOps tool syncs it and sends every pod
// back to stable; the original commit's status says failure "rolled back by
// <revert sha>"; the revert commit's status reports the rollback and its
// success; the sync then lands and changes nothing.
func TestGitGate_revertCommit_rollsBackBeforeTheSync(t *testing.T) {
	w := newWorld(t, nil)

	// Given v2 merged, applied, paused at step 1 with 1 pod of v2.
	_, merge := w.mergePullRequest("Bump checkout to v2", "dev", "dev", map[string]string{manifest: deploymentYAML("v2")})
	w.fluxSync(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)

	// When the merge is reverted on main (not synced by the GitOps tool).
	revert, err := w.repo.Revert("main", merge, gitserver.RevertOptions{Mainline: 1})
	if err != nil {
		t.Fatalf("reverting: %v", err)
	}
	w.mirror("main", revert)

	// Then every pod goes back to v1 and the release stops, before any sync.
	w.waitRollout("Healthy after the revert", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.waitDeployment("v1", 4)
	w.waitStatus(merge, "failure", "rolled back by "+revert[:12])
	w.waitStatus(revert, "success", "rolled back "+merge[:12]+": stable revision restored")
	w.waitEvent("Rollout", "checkout", "RolledBack", "via git-revert")

	// When the GitOps tool syncs the revert.
	w.fluxSync(revert)

	// Then nothing changes: v1 everywhere, no new release, statuses kept.
	w.waitGate("bound to the revert", func(g *gitopsv1alpha1.GitGate) bool {
		return len(g.Status.Rollouts) == 1 && g.Status.Rollouts[0].Revision == revert
	})
	if ro := w.rollout(); ro.Status.Phase != rolloutsv1beta1.RolloutPhaseHealthy {
		t.Fatalf("rollout phase %s after the sync, want Healthy", ro.Status.Phase)
	}
	if pods := w.podsByImage(); pods["v1"] != 4 || len(pods) != 1 {
		t.Fatalf("pods %v after the sync, want 4 of v1", pods)
	}
	if s := w.status(revert); s.State != "success" {
		t.Fatalf("revert status %+v after the sync, want success", s)
	}
}

// Story 3b: sluice/rollback on the pull request of a StatefulSet's release
// sets the StatefulSet's pod template back to the stable revision's, read
// from its ControllerRevision, and every pod goes back to the stable image.
func TestGitGate_rollbackLabel_statefulSet_templateFromTheControllerRevision(t *testing.T) {
	w := newWorldOf(t, "StatefulSet", nil)
	w.gh.SetRole(ghRepo, "ops", githubfake.RoleWrite)

	// Given v2 merged, applied, paused at step 1: the highest ordinal runs
	// v2, the partition holds the other three on v1.
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "dev", map[string]string{manifest: statefulSetYAML("v2")})
	w.fluxSync(merge)
	ro := w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	stable := ro.Status.CanaryStatus.StableRevision
	w.waitDeploymentSplit(3, 1)
	w.waitStatus(merge, "pending", "step 1/3 paused: add label sluice/approve to continue")
	sts := &appsv1.StatefulSet{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: w.ns, Name: "checkout"}, sts); err != nil {
		t.Fatal(err)
	}
	if p := sts.Spec.UpdateStrategy.RollingUpdate; p == nil || p.Partition == nil || *p.Partition != 3 {
		t.Fatalf("partition while paused at step 1 = %+v, want 3", p)
	}
	if img := sts.Spec.Template.Spec.Containers[0].Image; img != "shop/checkout:v2" {
		t.Fatalf("template image while paused = %s, want v2", img)
	}

	// When ops adds sluice/rollback to the pull request.
	w.gh.AddLabel(ghRepo, pr, "sluice/rollback", "ops")

	// Then the StatefulSet's template is v1 again (the stable
	// ControllerRevision's), every pod runs v1, the release has stopped and
	// the status on the merge commit is failure "rolled back by ops".
	w.waitEvent("Rollout", "checkout", "RolledBack", "to the stable revision "+stable+" by ops via github-label")
	w.waitRollout("Healthy after rollback", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.waitDeployment("v1", 4)
	w.waitStatus(merge, "failure", "rolled back by ops")
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: w.ns, Name: "checkout"}, sts); err != nil {
		t.Fatal(err)
	}
	if sts.Status.UpdateRevision != stable {
		t.Errorf("update revision after rollback = %s, want the stable %s", sts.Status.UpdateRevision, stable)
	}
	if a := w.getGate().Status.Rollouts[0].Approvals; len(a) != 1 || a[0].Action != "Rollback" || a[0].By != "ops" {
		t.Errorf("gate approvals = %+v, want one Rollback by ops", a)
	}
}
