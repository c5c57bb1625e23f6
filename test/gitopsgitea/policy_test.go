package gitopsgitea

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/gitopsstory"
	"github.com/sluice-dev/sluice/test/poll"
)

// pendingOfTwo is the status of a release paused at step 1 that needs two
// approvers and has none.
const pendingOfTwo = "step 1/3 paused: 0 of 2 approvals; waiting for 2 more"

// Story (issue 14, quorum on Gitea): the gate needs two approvers per step.
// Alice's sluice/approve label alone waits, the merge commit's status
// saying "1 of 2 approvals (alice); waiting for 1 more". Bob, who opened the
// pull request, comments "/sluice approve" and is refused as its author;
// Carol, who may only read, is refused for her permission. Dave's
// "/sluice approve" comment makes two: step 1 is approved, recorded on the
// Rollout with both approvers, each with how, when and the pull request.
func TestGitGate_onGitea_twoApprovers_labelWaitsCommentAdvances_authorRefused(t *testing.T) {
	ctx := poll.Context(t)
	s := openShop(t, shopOptions{prefix: "gitea-quorum", pending: pendingOfTwo,
		gate: func(g *gitopsv1alpha1.GitGate) { g.Spec.Approval.MinApprovals = 2 }})
	gitopsstory.AfterPause(t, s.paused)

	// When alice adds sluice/approve.
	if err := s.repo.AddLabels(ctx, suite.alice, s.pr.Index, "sluice/approve"); err != nil {
		t.Fatal(err)
	}
	// Then it waits for one more, saying who approved.
	waitStatus(t, s.ns, s.repo, s.merge, "pending", "step 1/3 paused: 1 of 2 approvals (alice); waiting for 1 more")

	// When bob (the author) and carol (a reader) comment "/sluice approve".
	for _, u := range []struct {
		who    string
		reason string
		text   string
	}{{"bob", "SelfApproval", "bob opened pull request #"}, {"carol", "InsufficientPermission", "carol has read permission, write is needed"}} {
		user := suite.bob
		if u.who == "carol" {
			user = suite.carol
		}
		if _, err := s.repo.Comment(ctx, user, s.pr.Index, "/sluice approve"); err != nil {
			t.Fatal(err)
		}
		// Then each is refused, saying why.
		stage.WaitRefused(t, s.ns, u.reason, u.text)
	}
	if ro := stage.Rollout(t, s.ns); ro.Status.CurrentStepIndex != 1 {
		t.Fatalf("step %d after the author's and a reader's comments, want 1", ro.Status.CurrentStepIndex)
	}
	waitStatus(t, s.ns, s.repo, s.merge, "pending", "step 1/3 paused: 1 of 2 approvals (alice); waiting for 1 more")

	// When dave comments "/sluice approve".
	if _, err := s.repo.Comment(ctx, suite.dave, s.pr.Index, "Checked the dashboards.\n\n/sluice approve"); err != nil {
		t.Fatal(err)
	}

	// Then step 1 is approved by alice and dave, recorded on the Rollout.
	stage.WaitStep(t, s.ns, 2)
	got := stage.Approvals(t, s.ns)
	if len(got) != 1 || got[0].Step != 1 || got[0].By != "alice, dave" || got[0].Via != "gitea-label+gitea-comment" || len(got[0].Approvers) != 2 {
		t.Fatalf("approvals = %+v, want step 1 by alice and dave", got)
	}
	for i, want := range []struct{ by, via string }{{"alice", "gitea-label"}, {"dave", "gitea-comment"}} {
		if a := got[0].Approvers[i]; a.By != want.by || a.Via != want.via || int64(a.PullRequest) != s.pr.Index || a.At == nil {
			t.Errorf("approver %d = %+v, want %s via %s on #%d", i, a, want.by, want.via, s.pr.Index)
		}
	}
	waitStatus(t, s.ns, s.repo, s.merge, "pending", "step 2/3 paused: 0 of 2 approvals; waiting for 2 more")
}

// Story (issue 14, expiry on Gitea): two approvers needed, approvals valid
// for 8 seconds. Alice's label expires before Dave comments: the gate says
// it expired and the release waits; Alice approving again by comment makes
// two.
func TestGitGate_onGitea_expiredApproval_doesNotCount(t *testing.T) {
	ctx := poll.Context(t)
	s := openShop(t, shopOptions{prefix: "gitea-expiry", pending: pendingOfTwo, gate: func(g *gitopsv1alpha1.GitGate) {
		g.Spec.Approval.MinApprovals = 2
		g.Spec.Approval.ExpireAfter = &metav1.Duration{Duration: 8 * time.Second}
	}})
	gitopsstory.AfterPause(t, s.paused)
	if err := s.repo.AddLabels(ctx, suite.alice, s.pr.Index, "sluice/approve"); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, s.ns, s.repo, s.merge, "pending", "step 1/3 paused: 1 of 2 approvals (alice); waiting for 1 more")
	stage.WaitRefused(t, s.ns, "ApprovalExpired", "expired after 8s (spec.approval.expireAfter); approve again")
	waitStatus(t, s.ns, s.repo, s.merge, "pending", pendingOfTwo)

	if _, err := s.repo.Comment(ctx, suite.dave, s.pr.Index, "/sluice approve"); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, s.ns, s.repo, s.merge, "pending", "step 1/3 paused: 1 of 2 approvals (dave); waiting for 1 more")
	if ro := stage.Rollout(t, s.ns); ro.Status.CurrentStepIndex != 1 {
		t.Fatalf("step %d with an expired and a fresh approval, want 1", ro.Status.CurrentStepIndex)
	}

	if _, err := s.repo.Comment(ctx, suite.alice, s.pr.Index, "/sluice approve step=1"); err != nil {
		t.Fatal(err)
	}
	stage.WaitStep(t, s.ns, 2)
	if got := stage.Approvals(t, s.ns); len(got) != 1 || got[0].By != "dave, alice" {
		t.Fatalf("approvals = %+v, want step 1 by dave and alice", got)
	}
}

// Story (issue 14, reject by comment on Gitea): Alice comments "/sluice
// reject" on Bob's merged pull request: the release is aborted, every pod
// back on v1 with the template left v2 as Git has it, the abort and the
// gate's record say it was rejected by alice via gitea-comment on the pull
// request, the merge's status says so, and Flux re-applying releases
// nothing.
func TestGitGate_onGitea_rejectComment_abortsBackOnStable(t *testing.T) {
	ctx := poll.Context(t)
	s := openShop(t, shopOptions{prefix: "gitea-reject-comment"})
	stage.WaitPods(t, s.ns, map[string]int{v1: 3, v2: 1})

	if _, err := s.repo.Comment(ctx, suite.alice, s.pr.Index, "Not this week.\n/sluice reject"); err != nil {
		t.Fatal(err)
	}
	stage.WaitAborted(t, s.ns)
	stage.WaitPods(t, s.ns, map[string]int{v1: 4})
	stage.AssertTemplate(t, s.ns, v2)
	reason := fmt.Sprintf("rejected: comment /sluice reject by alice on pull request #%d", s.pr.Index)
	ro := stage.WaitRollout(t, s.ns, "aborted with the rejection", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Aborted != nil })
	if ab := ro.Status.Aborted; ab.Reason != reason || ab.By != "alice" || ab.Via != "gitea-comment" || int64(ab.PullRequest) != s.pr.Index {
		t.Errorf("abort = %+v, want %q by alice via gitea-comment on pull request #%d", ab, reason, s.pr.Index)
	}
	waitStatus(t, s.ns, s.repo, s.merge, "failure", "rejected at step 1/3 by alice")
	g := &gitopsv1alpha1.GitGate{}
	if err := suite.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: "shop"}, g); err != nil {
		t.Fatal(err)
	}
	if a := g.Status.Rollouts[0].Approvals; len(a) != 1 || !a[0].Rejected || a[0].By != "alice" || a[0].Via != "gitea-comment" || int64(a[0].PullRequest) != s.pr.Index {
		t.Errorf("gate record = %+v, want alice's rejection via gitea-comment", a)
	}
	stage.AssertHoldsAgainstReapplies(t, s.ns, v2)
	waitStatus(t, s.ns, s.repo, s.merge, "failure", "rejected at step 1/3 by alice")
}
