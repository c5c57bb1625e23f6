package gitopsgitea

import (
	"fmt"
	"testing"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/poll"
)

// Story (issue 14): a reject label on Gitea. Alice adds sluice/reject to
// Bob's merged pull request of a release paused at step 1: the release is
// aborted as the rollback label aborts it (every pod back on v1, the pod
// template left v2 as in Git), the abort says "rejected: label
// sluice/reject by alice on pull request #N", recorded via gitea-label
// with the pull request, the merge commit's status says failure "rejected
// at step 1/3 by alice", and Flux applying the merge again releases
// nothing.
func TestGitGate_onGitea_rejectLabel_abortsAndSaysRejected(t *testing.T) {
	ctx := poll.Context(t)
	s := openShop(t, shopOptions{prefix: "gitea-reject", labels: []string{"sluice/approve", "sluice/reject"}})
	stage.WaitPods(t, s.ns, map[string]int{v1: 3, v2: 1})

	if err := s.repo.AddLabels(ctx, suite.alice, s.pr.Index, "sluice/reject"); err != nil {
		t.Fatal(err)
	}
	stage.WaitAborted(t, s.ns)
	stage.WaitPods(t, s.ns, map[string]int{v1: 4})
	stage.AssertTemplate(t, s.ns, v2)
	reason := fmt.Sprintf("rejected: label sluice/reject by alice on pull request #%d", s.pr.Index)
	ro := stage.WaitRollout(t, s.ns, "aborted with the rejection", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Aborted != nil })
	if ab := ro.Status.Aborted; ab.Reason != reason || ab.By != "alice" || ab.Via != "gitea-label" || int64(ab.PullRequest) != s.pr.Index {
		t.Errorf("abort = %+v, want %q by alice via gitea-label on pull request #%d", ab, reason, s.pr.Index)
	}
	waitStatus(t, s.ns, s.repo, s.merge, "failure", "rejected at step 1/3 by alice")

	stage.AssertHoldsAgainstReapplies(t, s.ns, v2)
	waitStatus(t, s.ns, s.repo, s.merge, "failure", "rejected at step 1/3 by alice")
}
