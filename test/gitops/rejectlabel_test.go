package gitops

import (
	"fmt"
	"testing"
	"time"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// Story 3c (issue 14): sluice/reject on the pull request of the commit
// being released aborts the release as sluice/rollback does (every pod back
// on the stable revision at once, the pod template left as Git has it), and
// says it was a rejection: the Rollout's abort names the label, who added
// it and the pull request, the commit status is failure "rejected at step
// 1/3 by <who>", and Flux re-applying the commit releases nothing. The
// pull request's author may reject their own release; the label on another
// commit's pull request does nothing.
func TestGitGate_rejectLabel_abortsTheReleaseAndSaysRejected(t *testing.T) {
	w := newWorld(t, nil)
	w.gh.SetRole(ghRepo, "dev", githubfake.RoleWrite)

	// Given a pull request that changed only the docs, merged and applied,
	// then v2 merged (opened by dev), applied, paused at step 1.
	docsPR, docs := w.mergePullRequest("Document checkout", "dev", "lead", map[string]string{"docs/checkout.md": "# checkout\n"})
	w.waitApplied(docs)
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "lead", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	ro := w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	stable := ro.Status.CanaryStatus.StableRevision
	w.waitDeploymentSplit(3, 1)
	w.waitStatus(merge, "pending", "step 1/3 paused: add label sluice/approve to continue")

	// When dev adds sluice/reject to the docs pull request (another
	// commit's), the release goes on waiting.
	w.gh.AddLabel(ghRepo, docsPR, "sluice/reject", "dev")
	w.assertStaysPaused(1, 3, 1)

	// When dev, the author, adds sluice/reject to the v2 pull request.
	w.gh.AddLabel(ghRepo, pr, "sluice/reject", "dev")

	// Then the release is aborted: every pod back on v1 at once while the
	// template stays v2 (Git's), the abort says who rejected it and on
	// which pull request, and the commit status says rejected.
	w.waitAborted()
	w.waitPods("v1", 4)
	w.assertTemplate("v2")
	reason := fmt.Sprintf("rejected: label sluice/reject by dev on pull request #%d", pr)
	if ab := w.rollout().Status.Aborted; ab.Reason != reason || ab.By != "dev" || ab.Via != "github-label" || ab.PullRequest != int32(pr) || ab.Step != 1 { //nolint:gosec // a small pull request number
		t.Errorf("abort = %+v, want %q by dev via github-label, pull request #%d, step 1", ab, reason, pr)
	}
	w.waitStatus(merge, "failure", "rejected at step 1/3 by dev")
	w.waitEvent("Rollout", "checkout", "Rejected",
		fmt.Sprintf("rejected by dev via github-label (label sluice/reject on pull request #%d at ", pr))
	w.waitEvent("Rollout", "checkout", "Rejected", "back on the stable revision "+stable)
	if a := w.getGate().Status.Rollouts[0].Approvals; len(a) != 1 || a[0].Action != "Rollback" || !a[0].Rejected || a[0].By != "dev" || a[0].Via != "github-label" {
		t.Errorf("gate approvals = %+v, want one rejecting Rollback by dev via github-label", a)
	}

	// When Flux applies the same commit again (drift correction), twice.
	w.reapplied(merge)
	w.reapplied(merge)

	// Then nothing is released again, and the failure was posted once.
	w.assertStaysAborted("v1", 4)
	if n := w.statusCount(merge, "failure", "rejected at step 1/3 by dev"); n != 1 {
		t.Errorf("failure posted %d times, want once: %+v", n, w.gh.Statuses(ghRepo, merge))
	}
}

// assertStaysPaused checks for a few seconds (several of the gate's
// intervals) that the release stays paused at step with stable and canary
// pods.
func (w *world) assertStaysPaused(step int32, stable, canary int) {
	w.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		ro := w.rollout()
		if ro.Status.Phase == rolloutsv1beta1.RolloutPhaseAborted || ro.Status.CurrentStepIndex != step || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
			w.t.Fatalf("no longer paused at step %d: phase %s, step %d %s, %s", step, ro.Status.Phase, ro.Status.CurrentStepIndex, ro.Status.CurrentStepState, ro.Status.Message)
		}
		if pods := w.podsByImage(); pods["v1"] != stable || pods["v2"] != canary {
			w.t.Fatalf("pods %v while paused, want %d of v1 and %d of v2", pods, stable, canary)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
