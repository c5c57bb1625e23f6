package gitops

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// twoApprovers is a gate policy that needs two different people per step.
func twoApprovers(g *gitopsv1alpha1.GitGate) { g.Spec.Approval.MinApprovals = 2 }

// Story (issue 14, quorum): the gate needs two approvers per step. At step 1
// alice's label alone waits, the commit status and the gate's status saying
// "1 of 2 approvals (alice); waiting for 1 more"; bob's "/sluice approve"
// comment makes two and step 1 is approved, recorded with both of them. At
// step 2 dev, who opened the pull request, approves by comment and is
// refused as its author; alice's comment and carol's approving review make
// two and the release completes.
func TestGitGate_twoApprovers_labelWaitsCommentAndReviewAdvance_authorRefused(t *testing.T) {
	w := newWorld(t, twoApprovers)
	for _, u := range []string{"alice", "bob", "carol", "dev"} {
		w.gh.SetRole(ghRepo, u, githubfake.RoleWrite)
	}
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "lead", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	ro := w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	canary := ro.Status.CanaryStatus.CanaryRevision
	w.waitDeploymentSplit(3, 1)
	w.waitStatus(merge, "pending", "step 1/3 paused: 0 of 2 approvals; waiting for 2 more")

	// When alice adds sluice/approve.
	w.afterPause()
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "alice")

	// Then the release waits for one more, and says who approved.
	w.waitStatus(merge, "pending", "step 1/3 paused: 1 of 2 approvals (alice); waiting for 1 more")
	g := w.waitGate("the quorum of step 1", func(g *gitopsv1alpha1.GitGate) bool {
		q := g.Status.Rollouts[0].Quorum
		return q != nil && q.Step == 1 && q.Needed == 2 && len(q.Approvals) == 1 && q.Approvals[0].By == "alice"
	})
	if a := g.Status.Rollouts[0].Quorum.Approvals[0]; a.Via != "github-label" || a.PullRequest != pr || a.At.IsZero() {
		t.Errorf("alice's approval = %+v, want via github-label on #%d with its time", a, pr)
	}
	w.assertStaysPaused(1, 3, 1)

	// When bob comments "/sluice approve".
	w.gh.AddComment(ghRepo, pr, "bob", "Looks right.\n\n/sluice approve\n")

	// Then step 1 is approved by both, and the Rollout's record names them.
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(2, 2)
	records := w.approvals()
	if len(records) != 1 || records[0].Step != 1 || records[0].Revision != canary || records[0].By != "alice, bob" ||
		records[0].Via != "github-label+github-comment" || len(records[0].Approvers) != 2 {
		t.Fatalf("approval record = %+v, want step 1 by alice and bob", records)
	}
	for i, want := range []struct{ by, via string }{{"alice", "github-label"}, {"bob", "github-comment"}} {
		if a := records[0].Approvers[i]; a.By != want.by || a.Via != want.via || a.PullRequest != int32(pr) || a.At == nil { //nolint:gosec // a small number
			t.Errorf("approver %d = %+v, want %s via %s on #%d", i, a, want.by, want.via, pr)
		}
	}
	w.waitEvent("Rollout", "checkout", "GitApproval", "approved by alice via github-label at ")
	w.waitEvent("Rollout", "checkout", "GitApproval", "bob via github-comment at ")

	// When dev, the pull request's author, comments "/sluice approve".
	w.afterPause()
	w.gh.AddComment(ghRepo, pr, "dev", "/sluice approve")

	// Then it is refused, saying why, and the release waits.
	w.waitEvent("Rollout", "checkout", "SelfApproval", "dev opened pull request #")
	w.waitGate("dev's approval refused with who and how", func(g *gitopsv1alpha1.GitGate) bool {
		for _, r := range g.Status.Rollouts[0].Refused {
			if r.Reason == "SelfApproval" && r.By == "dev" && r.Via == "github-comment" && r.PullRequest == pr && r.At != nil {
				return true
			}
		}
		return false
	})
	w.waitStatus(merge, "pending", "step 2/3 paused: 0 of 2 approvals; waiting for 2 more")
	w.assertStaysPaused(2, 2, 2)

	// When alice comments and carol approves in a review.
	w.gh.AddComment(ghRepo, pr, "alice", "/sluice approve step=2")
	w.waitStatus(merge, "pending", "step 2/3 paused: 1 of 2 approvals (alice); waiting for 1 more")
	w.gh.Review(ghRepo, pr, "carol", githubfake.ReviewApproved, "")

	// Then the release completes.
	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.waitDeployment("v2", 4)
	w.waitStatus(merge, "success", "released: 3/3 steps done")
	records = w.approvals()
	if len(records) != 2 || records[1].Step != 2 || records[1].By != "alice, carol" || records[1].Via != "github-comment+github-review" {
		t.Fatalf("approval records = %+v, want step 2 by alice and carol last", records)
	}
}

// Story (issue 14, expiry): with two approvers needed and approvals valid
// for 8 seconds, alice's label grows too old before bob comments: it no
// longer counts, and the gate says it expired; alice approving again makes
// two.
func TestGitGate_expiredApproval_doesNotCount(t *testing.T) {
	w := newWorld(t, func(g *gitopsv1alpha1.GitGate) {
		twoApprovers(g)
		g.Spec.Approval.ExpireAfter = &metav1.Duration{Duration: 8 * time.Second}
	})
	for _, u := range []string{"alice", "bob"} {
		w.gh.SetRole(ghRepo, u, githubfake.RoleWrite)
	}
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "lead", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)

	// When alice approves, and bob only once her approval has expired.
	w.afterPause()
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "alice")
	w.waitStatus(merge, "pending", "step 1/3 paused: 1 of 2 approvals (alice); waiting for 1 more")
	w.waitEvent("Rollout", "checkout", "ApprovalExpired", "added by alice: given at ")
	w.gh.AddComment(ghRepo, pr, "bob", "/sluice approve")

	// Then it waits for one more: alice's approval expired.
	w.waitStatus(merge, "pending", "step 1/3 paused: 1 of 2 approvals (bob); waiting for 1 more")
	if g := w.getGate(); !refused(g, "ApprovalExpired", "label sluice/approve", "expired after 8s (spec.approval.expireAfter); approve again") {
		t.Errorf("refusals %+v, want alice's expired label", g.Status.Rollouts[0].Refused)
	}
	if ro := w.rollout(); ro.Status.CurrentStepIndex != 1 {
		t.Fatalf("step %d after an expired and a fresh approval, want 1", ro.Status.CurrentStepIndex)
	}

	// When alice approves again, by comment.
	w.gh.AddComment(ghRepo, pr, "alice", "/sluice approve")

	// Then step 1 is approved by bob and alice.
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	if r := w.approvals(); len(r) != 1 || r[0].By != "bob, alice" {
		t.Fatalf("approval records = %+v, want step 1 by bob and alice", r)
	}
}

// Story (issue 14, reject by comment): "/sluice reject" on the pull request
// of the commit being released aborts it as the reject label does: every
// pod back on the stable revision at once, the pod template left as Git has
// it, recorded as a rejection by who commented, via github-comment.
func TestGitGate_rejectComment_abortsTheReleaseBackOnStable(t *testing.T) {
	w := newWorld(t, twoApprovers)
	w.gh.SetRole(ghRepo, "sec", githubfake.RoleWrite)
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "lead", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)

	// When sec comments "/sluice reject".
	w.gh.AddComment(ghRepo, pr, "sec", "This leaks the card number.\n/sluice reject")

	// Then the release is aborted, back on v1, and said to be rejected.
	w.waitAborted()
	w.waitPods("v1", 4)
	w.assertTemplate("v2")
	reason := fmt.Sprintf("rejected: comment /sluice reject by sec on pull request #%d", pr)
	if ab := w.rollout().Status.Aborted; ab.Reason != reason || ab.By != "sec" || ab.Via != "github-comment" || ab.PullRequest != int32(pr) { //nolint:gosec // a small number
		t.Errorf("abort = %+v, want %q by sec via github-comment on #%d", ab, reason, pr)
	}
	w.waitStatus(merge, "failure", "rejected at step 1/3 by sec")
	w.waitEvent("Rollout", "checkout", "Rejected", fmt.Sprintf("rejected by sec via github-comment (comment /sluice reject on pull request #%d at ", pr))
	a := w.getGate().Status.Rollouts[0].Approvals
	if len(a) != 1 || a[0].Action != "Rollback" || !a[0].Rejected || a[0].By != "sec" || a[0].Via != "github-comment" || a[0].PullRequest != pr {
		t.Errorf("gate approvals = %+v, want one rejecting Rollback by sec via github-comment on #%d", a, pr)
	}
	// And a Flux re-apply releases nothing.
	w.reapplied(merge)
	w.assertStaysAborted("v1", 4)
	if !strings.Contains(w.getGate().Status.Rollouts[0].Message, "rejected") {
		t.Errorf("gate message %q does not say rejected", w.getGate().Status.Rollouts[0].Message)
	}
}

// Story (issue 14, check-run buttons under the policy): sluice runs as a
// GitHub App and the gate needs two approvers. Dev, who opened the pull
// request, presses "Approve step 1" and is refused as its author; alice's
// label and bob's press of "Approve step 1" make two, and step 1 is
// approved, recorded with both: alice via the label, bob via the check
// run.
func TestGitGate_asGitHubApp_buttonPressesCountTowardTheQuorum(t *testing.T) {
	secret := []byte("app-hook-secret")
	w := newAppWorld(t, secret, twoApprovers)
	for _, u := range []string{"alice", "bob", "dev"} {
		w.gh.SetRole(ghRepo, u, githubfake.RoleWrite)
	}
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "lead", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)
	run := w.waitCheckRun(merge, "in_progress", []string{"approve-1", "promote", "rollback"}, "Step 1/3 paused")
	w.afterPause()

	// When dev, the author, presses "Approve step 1".
	w.press(secret, run.ID, "approve-1", "dev")
	// Then it is refused as the author's.
	w.waitGate("dev's press refused", func(g *gitopsv1alpha1.GitGate) bool {
		for _, r := range g.Status.Rollouts[0].Refused {
			if r.Reason == "SelfApproval" && r.By == "dev" && r.Via == "github-check-run" && strings.Contains(r.Message, "dev opened pull request #") {
				return true
			}
		}
		return false
	})

	// When alice labels and bob presses "Approve step 1".
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "alice")
	w.waitStatus(merge, "pending", "step 1/3 paused: 1 of 2 approvals (alice); waiting for 1 more")
	w.press(secret, run.ID, "approve-1", "bob")

	// Then step 1 is approved by both, each with how.
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	got := w.approvals()
	if len(got) != 1 || got[0].By != "alice, bob" || got[0].Via != "github-label+github-check-run" || len(got[0].Approvers) != 2 ||
		got[0].Approvers[1].By != "bob" || got[0].Approvers[1].Via != "github-check-run" {
		t.Fatalf("approvals = %+v, want step 1 by alice via the label and bob via the check run", got)
	}
}
