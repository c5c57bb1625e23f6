package gitopsgitlab

import (
	"fmt"
	"testing"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/gitopsstory"
)

// pausedOfTwo is the status of a release paused at step 1 that needs two
// approvers and has none.
const pausedOfTwo = "step 1/3 paused: 0 of 2 approvals; waiting for 2 more"

// Story (issue 14, quorum on GitLab, with merge request approvals): the team
// releases a merge request before merging it (Flux and the gate follow its
// branch), and the gate needs two approvers per step. GitLab refuses
// approving a merged merge request, so its approvals count for a release
// only while the merge request is open, as here.
//
// Alice's sluice/approve label alone waits: the gate counts her, and the
// note itemises the quorum ("Step 1 needs 2 approvals: alice (label, …)").
// Bob approves his own merge request (GitLab lets him): refused, he is its
// author. Dave's approval of the merge request makes two: step 1 is
// approved by alice and dave via gitlab-label+gitlab-review, each recorded
// with the merge request. At step 2 their earlier approvals count for
// nothing (given before the pause); Alice's "/sluice approve" note and Dave
// approving again (after taking his approval back) make two, and the
// release completes, its commit's status success.
func TestGitGate_onGitLab_twoApprovers_labelAndMergeRequestApproval_authorRefused(t *testing.T) {
	s := openShop(t, shopOptions{prefix: "gitlab-quorum", deployBeforeMerge: true, paused: pausedOfTwo,
		gate: func(g *gitopsv1alpha1.GitGate) { g.Spec.Approval.MinApprovals = 2 }})
	ns, iid := s.ns, s.mr.IID
	gitopsstory.AfterPause(t, s.paused)

	// When alice adds sluice/approve, the quorum counts her and waits.
	s.gl.AddLabels(project, iid, "alice", "sluice/approve")
	g := stage.WaitGate(t, ns, "counting alice's label", func(g *gitopsv1alpha1.GitGate) bool {
		q := g.Status.Rollouts[0].Quorum
		return q != nil && len(q.Approvals) == 1
	})
	if q := g.Status.Rollouts[0].Quorum; q.Step != 1 || q.Needed != 2 || q.Approvals[0].By != "alice" || q.Approvals[0].Via != "gitlab-label" ||
		int64(q.Approvals[0].PullRequest) != iid || len(q.Waiting) != 1 || q.Waiting[0] != "1 more" {
		t.Fatalf("quorum = %+v, want alice's label and 1 more", q)
	}
	at := g.Status.Rollouts[0].Quorum.Approvals[0].At.UTC().Format("15:04 UTC")
	waitNote(t, s, "**Step 1 needs 2 approvals:** alice (label, "+at+").", "Still waiting for 1 more.")
	waitStatus(t, s, s.released, "running", "step 1/3 paused: 1 of 2 approvals (alice); waiting for 1 more")

	// When bob, the author, approves his merge request: refused.
	s.gl.ApproveMergeRequest(project, iid, "bob")
	if r := stage.WaitRefused(t, ns, "SelfApproval", fmt.Sprintf("bob opened pull request #%d", iid)); r.Via != "gitlab-review" {
		t.Errorf("refusal %+v, want bob's merge request approval (gitlab-review)", r)
	}
	if ro := stage.Rollout(t, ns); ro.Status.CurrentStepIndex != 1 {
		t.Fatalf("step %d after the author's approval, want 1", ro.Status.CurrentStepIndex)
	}

	// When dave approves the merge request: two, step 1 approved.
	s.gl.ApproveMergeRequest(project, iid, "dave")
	second := stage.WaitStep(t, ns, 2)
	got := stage.Approvals(t, ns)
	if len(got) != 1 || got[0].Step != 1 || got[0].By != "alice, dave" || got[0].Via != "gitlab-label+gitlab-review" || len(got[0].Approvers) != 2 {
		t.Fatalf("approvals = %+v, want step 1 by alice and dave", got)
	}
	for i, want := range []struct{ by, via string }{{"alice", "gitlab-label"}, {"dave", "gitlab-review"}} {
		if a := got[0].Approvers[i]; a.By != want.by || a.Via != want.via || int64(a.PullRequest) != iid || a.At == nil {
			t.Errorf("approver %d = %+v, want %s via %s on !%d", i, a, want.by, want.via, iid)
		}
	}
	waitNote(t, s, "Step 2/3 paused", "**Step 2 needs 2 approvals:** none yet.", "step 1 approved by **alice, dave** via gitlab-label+gitlab-review")

	// At step 2, alice's note and dave's fresh approval make two.
	gitopsstory.AfterPause(t, second)
	s.gl.CommentOnMergeRequest(project, iid, "alice", "/sluice approve")
	stage.WaitGate(t, ns, "counting alice's note for step 2", func(g *gitopsv1alpha1.GitGate) bool {
		q := g.Status.Rollouts[0].Quorum
		return q != nil && q.Step == 2 && len(q.Approvals) == 1 && q.Approvals[0].Via == "gitlab-comment"
	})
	if ro := stage.Rollout(t, ns); ro.Status.CurrentStepIndex != 2 {
		t.Fatalf("step %d with dave's approval of step 1 standing, want 2: it predates the pause", ro.Status.CurrentStepIndex)
	}
	s.gl.UnapproveMergeRequest(project, iid, "dave")
	s.gl.ApproveMergeRequest(project, iid, "dave")
	stage.WaitReleased(t, ns)
	if got := stage.Approvals(t, ns); len(got) != 2 || got[1].Step != 2 || got[1].By != "alice, dave" || got[1].Via != "gitlab-comment+gitlab-review" {
		t.Fatalf("approvals = %+v, want step 2 by alice and dave", got)
	}
	if done := waitStatus(t, s, s.released, "success", "released: 3/3 steps done"); !done.Started {
		t.Errorf("the success %+v did not come from running", done)
	}
	assertRestartsOnly(t, s, s.released)
}

// Story (issue 14, reject by note on GitLab): Alice writes "/sluice reject"
// on Bob's merged merge request: the release is aborted, every pod back on
// v1 with the template left v2 as Git has it; the abort and the gate's
// record say it was rejected by alice via gitlab-comment on the merge
// request; the merge's running status turns failed "rejected at step 1/3
// by alice"; Flux re-applying releases nothing.
func TestGitGate_onGitLab_rejectNote_abortsBackOnStable(t *testing.T) {
	s := openShop(t, shopOptions{prefix: "gitlab-reject"})
	ns, iid := s.ns, s.mr.IID
	stage.WaitPods(t, ns, map[string]int{gitopsstory.V1: 3, gitopsstory.V2: 1})

	s.gl.CommentOnMergeRequest(project, iid, "alice", "Not this week.\n/sluice reject")
	stage.WaitAborted(t, ns)
	stage.WaitPods(t, ns, map[string]int{gitopsstory.V1: 4})
	stage.AssertTemplate(t, ns, gitopsstory.V2)
	reason := fmt.Sprintf("rejected: comment /sluice reject by alice on pull request #%d", iid)
	ro := stage.WaitRollout(t, ns, "aborted with the rejection", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Aborted != nil })
	if ab := ro.Status.Aborted; ab.Reason != reason || ab.By != "alice" || ab.Via != "gitlab-comment" || int64(ab.PullRequest) != iid {
		t.Errorf("abort = %+v, want %q by alice via gitlab-comment on !%d", ab, reason, iid)
	}
	if failed := waitStatus(t, s, s.released, "failed", "rejected at step 1/3 by alice"); !failed.Started {
		t.Errorf("the failed status %+v did not come from running", failed)
	}
	assertRestartsOnly(t, s, s.released)
	if a := stage.GitGate(t, ns).Status.Rollouts[0].Approvals; len(a) != 1 || !a[0].Rejected || a[0].By != "alice" || a[0].Via != "gitlab-comment" || int64(a[0].PullRequest) != iid {
		t.Errorf("gate record = %+v, want alice's rejection via gitlab-comment", a)
	}
	waitNote(t, s, "Rejected at step 1/3 by alice", "rejected by **alice** via gitlab-comment")
	stage.AssertHoldsAgainstReapplies(t, ns, gitopsstory.V2)
	waitStatus(t, s, s.released, "failed", "rejected at step 1/3 by alice")
}
