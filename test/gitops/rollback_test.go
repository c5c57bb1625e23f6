package gitops

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/githubfake"
	"github.com/sluice-dev/sluice/test/gitopsworld"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// Story 3: sluice/promote-full approves every remaining step; on the next
// release sluice/rollback aborts it: every pod back on the stable revision
// at once, the pod template left as Git has it; the status turns failure
// "aborted at step N by <who>"; Flux re-applying the commit releases
// nothing; approvals are refused saying what to do; the revert syncing
// completes the rollback and its commit reports success.
func TestGitGate_promoteFullAndRollbackLabels(t *testing.T) {
	w := newWorld(t, func(g *gitopsv1alpha1.GitGate) { g.Spec.GitHub.ProposeRevert = true })
	w.gh.SetRole(ghRepo, "lead", githubfake.RoleMaintain)
	w.gh.SetRole(ghRepo, "ops", githubfake.RoleWrite)

	// Given v2 merged, applied, paused at step 1.
	pr2, merge2 := w.mergePullRequest("Bump checkout to v2", "dev", "lead", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge2)
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
	w.waitApplied(merge3)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.eventually("1 pod of v3", func() (bool, string) {
		pods := w.podsByImage()
		return pods["v2"] == 3 && pods["v3"] == 1, ""
	})

	// When ops adds sluice/rollback to the v3 pull request.
	w.gh.AddLabel(ghRepo, pr3, "sluice/rollback", "ops")

	// Then the release is aborted: every pod is back on v2 at once while
	// the pod template stays v3 (Git's), and the status on the v3 merge
	// commit is failure "aborted at step 1/3 by ops".
	w.waitAborted()
	w.waitPods("v2", 4)
	w.assertTemplate("v3")
	w.waitStatus(merge3, "failure", "aborted at step 1/3 by ops")
	w.waitEvent("Rollout", "checkout", "RolledBack", "by ops via github-label")

	// When Flux applies the same commit again (drift correction), twice.
	w.reapplied(merge3)
	w.reapplied(merge3)

	// Then nothing is released again, and an approval is refused saying
	// what to do.
	w.assertStaysAborted("v2", 4)
	w.afterPause()
	w.gh.AddLabel(ghRepo, pr3, "sluice/approve", "lead")
	w.waitEvent("Rollout", "checkout", "RolledBack", "rolled back; revert the commit in Git, or push a new one")
	w.assertStaysAborted("v2", 4)
	if n := w.statusCount(merge3, "failure", "aborted at step 1/3 by ops"); n != 1 {
		t.Errorf("failure posted %d times, want once: %+v", n, w.gh.Statuses(ghRepo, merge3))
	}
	// And (opt-in) a pull request reverting the v3 merge is open, saying
	// which rollout, which step and who rolled back.
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
	for _, want := range []string{"Rollout " + w.ns + "/checkout", "step 1/3", "by ops via github-label"} {
		if !strings.Contains(revertPR.Body, want) {
			t.Errorf("revert pull request body %q does not say %q", revertPR.Body, want)
		}
	}

	// When the revert lands on main and syncs.
	revert, err := w.repo.Revert("main", merge3, gitserver.RevertOptions{Mainline: 1})
	if err != nil {
		t.Fatalf("reverting: %v", err)
	}
	w.mirror("main", revert)
	w.waitApplied(revert)

	// Then the rollback completes: Healthy, every pod and the template on
	// v2, and the revert commit reports success.
	w.waitRollout("Healthy after the revert synced", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.Aborted == nil
	})
	w.waitDeployment("v2", 4)
	w.waitStatus(revert, "success", "rolled back "+merge3[:12]+": stable revision restored")
	w.waitStatus(merge3, "failure", "rolled back by ops")
}

// Story 4: someone reverts the merge commit on the branch and pushes;
// sluice sees the revert before the GitOps tool syncs it and aborts the
// release (every pod back on stable, the template left alone); the
// original commit's status says failure "aborted at step 1/3 by <revert
// sha>"; the revert commit's is pending until the sync lands, which
// completes the rollback: success on the revert.
func TestGitGate_revertCommit_rollsBackBeforeTheSync(t *testing.T) {
	w := newWorld(t, nil)

	// Given v2 merged, applied, paused at step 1 with 1 pod of v2.
	_, merge := w.mergePullRequest("Bump checkout to v2", "dev", "dev", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)

	// When the merge is reverted on main while Flux is suspended, so that
	// the GitOps tool has not synced it.
	w.suspendFlux()
	revert, err := w.repo.Revert("main", merge, gitserver.RevertOptions{Mainline: 1})
	if err != nil {
		t.Fatalf("reverting: %v", err)
	}
	w.mirror("main", revert)

	// Then every pod goes back to v1 and the release is aborted, before any
	// sync: the template stays v2 until the revert syncs.
	w.waitAborted()
	w.waitPods("v1", 4)
	w.assertTemplate("v2")
	w.waitStatus(merge, "failure", "aborted at step 1/3 by "+revert[:12])
	w.waitStatus(revert, "pending", "rolling back "+merge[:12]+" to the stable revision")
	w.waitEvent("Rollout", "checkout", "RolledBack", "via git-revert")

	// While Flux is suspended nothing re-applies; the release stays aborted.
	// (Re-applies of the same commit are proved in the label stories.)
	w.assertStaysAborted("v1", 4)

	// When Flux is resumed and syncs the revert.
	w.resumeFlux()
	w.waitApplied(revert)

	// Then the rollback completes and the workload is handed back: v1
	// everywhere, the revert commit reports success, the merge commit
	// failure.
	w.waitRollout("Healthy after the sync", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.Aborted == nil
	})
	w.waitDeployment("v1", 4)
	w.waitStatus(revert, "success", "rolled back "+merge[:12]+": stable revision restored")
	w.waitStatus(merge, "failure", "rolled back by "+revert[:12])
	if pods := w.podsByImage(); pods["v1"] != 4 || len(pods) != 1 {
		t.Fatalf("pods %v after the sync, want 4 of v1", pods)
	}
}

// Story 3b: sluice/rollback on the pull request of a StatefulSet's release
// aborts it: the partition holds every pod, the updated ones are recreated
// on the stable revision, and the StatefulSet's template stays v2 as in
// Git, also when Flux applies the commit again.
func TestGitGate_rollbackLabel_statefulSet_holdsThePodsOnStable(t *testing.T) {
	w := newWorldOf(t, "StatefulSet", nil)
	w.gh.SetRole(ghRepo, "ops", githubfake.RoleWrite)

	// Given v2 merged, applied, paused at step 1: the highest ordinal runs
	// v2, the partition holds the other three on v1.
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "dev", map[string]string{manifest: gitopsworld.StatefulSetYAML("v2")})
	w.waitApplied(merge)
	ro := w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	stable := ro.Status.CanaryStatus.StableRevision
	w.waitDeploymentSplit(3, 1)
	w.waitStatus(merge, "pending", "step 1/3 paused: add label sluice/approve to continue")

	// When ops adds sluice/rollback to the pull request.
	w.gh.AddLabel(ghRepo, pr, "sluice/rollback", "ops")

	// Then every pod runs v1, the StatefulSet's template is still v2 and
	// held by its partition, the release is aborted and the status on the
	// merge commit is failure "aborted at step 1/3 by ops".
	w.waitEvent("Rollout", "checkout", "RolledBack", "to the stable revision "+stable+" by ops via github-label")
	w.waitAborted()
	w.waitPods("v1", 4)
	w.assertTemplate("v2")
	w.waitStatus(merge, "failure", "aborted at step 1/3 by ops")
	sts := &appsv1.StatefulSet{}
	if err := suite.c.Get(ctxFor(t), types.NamespacedName{Namespace: w.ns, Name: "checkout"}, sts); err != nil {
		t.Fatal(err)
	}
	if p := sts.Spec.UpdateStrategy.RollingUpdate; p == nil || p.Partition == nil || *p.Partition != 32767 {
		t.Fatalf("partition while aborted = %+v, want the hold 32767", p)
	}
	if sts.Status.CurrentRevision != stable {
		t.Errorf("current revision while aborted = %s, want the stable %s", sts.Status.CurrentRevision, stable)
	}
	if a := w.getGate().Status.Rollouts[0].Approvals; len(a) != 1 || a[0].Action != "Rollback" || a[0].By != "ops" {
		t.Errorf("gate approvals = %+v, want one Rollback by ops", a)
	}

	// When Flux applies the commit again.
	w.reapplied(merge)
	w.reapplied(merge)
	w.assertStaysAborted("v1", 4)
}

// waitAborted waits until the release is aborted and held on the stable
// revision.
func (w *world) waitAborted() {
	w.t.Helper()
	w.waitRollout("aborted and held on stable", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseAborted && r.Status.Aborted != nil && r.Status.Aborted.Held
	})
}

// waitPods waits until checkout runs n live pods, all of tag.
func (w *world) waitPods(tag string, n int) {
	w.t.Helper()
	w.eventually(fmt.Sprintf("%d pods of %s", n, tag), func() (bool, string) {
		pods := w.podsByImage()
		return pods[tag] == n && len(pods) == 1, fmt.Sprint(pods)
	})
}

// templateTag is the image tag of the workload's pod template.
func (w *world) templateTag() string {
	w.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: w.kind})
	if err := suite.c.Get(ctxFor(w.t), types.NamespacedName{Namespace: w.ns, Name: "checkout"}, u); err != nil {
		w.t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	image, _, _ := unstructured.NestedString(containers[0].(map[string]any), "image")
	return image[strings.LastIndex(image, ":")+1:]
}

// assertTemplate checks that the workload's pod template is still at tag:
// sluice never rewrites it.
func (w *world) assertTemplate(tag string) {
	w.t.Helper()
	if got := w.templateTag(); got != tag {
		w.t.Fatalf("pod template at %s, want %s (Git's): sluice must not change it", got, tag)
	}
}

// assertStaysAborted checks for a few seconds that the release stays
// aborted with n pods of tag and nothing released again.
func (w *world) assertStaysAborted(tag string, n int) {
	w.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		ro := w.rollout()
		if ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted {
			w.t.Fatalf("no longer aborted: phase %s, %s", ro.Status.Phase, ro.Status.Message)
		}
		if pods := w.podsByImage(); pods[tag] != n || len(pods) != 1 {
			w.t.Fatalf("pods %v while aborted, want %d of %s", pods, n, tag)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
