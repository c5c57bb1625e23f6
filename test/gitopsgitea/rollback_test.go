package gitopsgitea

import (
	"fmt"
	"strings"
	"testing"

	sdk "code.gitea.io/sdk/gitea"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	"github.com/sluice-dev/sluice/test/gitopsstory"
	"github.com/sluice-dev/sluice/test/kube"
	"github.com/sluice-dev/sluice/test/poll"
)

// The images of checkout's two versions in the stories' manifests.
const (
	v1 = gitopsstory.V1
	v2 = gitopsstory.V2
)

// Story: a team on Gitea reverts the merge. Alice pushes `git revert -m 1`
// of the merge commit to main on Gitea while Flux is suspended: sluice
// reads the revert from Gitea's Git before any sync and aborts the
// release, every pod back on v1 and the pod template left as Git had it
// (v2). The merge commit's status turns failure "aborted at step 1/3 by
// <revert>", the revert's is pending. Nothing moves while Flux is
// suspended. When Flux syncs the revert, the rollback completes: v1
// everywhere, success on the revert, failure "rolled back by <revert>" on
// the merge.
func TestGitGate_onGitea_gitRevert_rollsBackBeforeTheSync(t *testing.T) {
	ctx := poll.Context(t)
	s := openShop(t, shopOptions{prefix: "gitea-revert"})
	stage.WaitPods(t, s.ns, map[string]int{v1: 3, v2: 1})

	if err := suite.flux.Suspend(ctx, s.ns, "apps"); err != nil {
		t.Fatal(err)
	}
	revert, err := s.alice.Revert(ctx, "main", s.merge)
	if err != nil {
		t.Fatal(err)
	}

	stage.WaitAborted(t, s.ns)
	stage.WaitPods(t, s.ns, map[string]int{v1: 4})
	stage.AssertTemplate(t, s.ns, v2)
	waitStatus(t, s.ns, s.repo, s.merge, "failure", "aborted at step 1/3 by "+revert[:12])
	waitStatus(t, s.ns, s.repo, revert, "pending", "rolling back "+s.merge[:12]+" to the stable revision")
	stage.AssertStaysAborted(t, s.ns, 4)

	if err := suite.flux.Resume(ctx, s.ns, "apps"); err != nil {
		t.Fatal(err)
	}
	if err := suite.flux.WaitApplied(ctx, s.ns, "apps", revert); err != nil {
		t.Fatal(err)
	}
	stage.WaitHealthyAgain(t, s.ns)
	kube.WaitDeploymentComplete(t, suite.c, s.ns, "checkout", v1)
	waitStatus(t, s.ns, s.repo, revert, "success", "rolled back "+s.merge[:12]+": stable revision restored")
	waitStatus(t, s.ns, s.repo, s.merge, "failure", "rolled back by "+revert[:12])
}

// Story: a rollback label on Gitea holds against Flux. Alice adds
// sluice/rollback to the merged pull request of a release paused at step
// 1: the release is aborted, every pod back on v1, and the merge commit's
// status says failure "aborted at step 1/3 by alice". The pod template
// stays v2, as in Git, and Flux applying the merge again (drift
// correction) neither changes it nor starts the release again. The gate
// (spec.scm.proposeRevert) opens a pull request on Gitea reverting the
// merge; when Alice merges it and Flux applies it, the rollback completes:
// v1 everywhere, success on the pull request's revert commit, failure
// "rolled back by alice" on the release's merge.
func TestGitGate_onGitea_rollbackLabel_holdsAgainstFluxAndProposesTheRevert(t *testing.T) {
	ctx := poll.Context(t)
	s := openShop(t, shopOptions{prefix: "gitea-rollback", labels: []string{"sluice/approve", "sluice/rollback"},
		gate: func(g *gitopsv1alpha1.GitGate) { g.Spec.SCM.ProposeRevert = true }})
	stage.WaitPods(t, s.ns, map[string]int{v1: 3, v2: 1})

	gitopsstory.AfterPause(t, s.paused)
	if err := s.repo.AddLabels(ctx, suite.alice, s.pr.Index, "sluice/rollback"); err != nil {
		t.Fatal(err)
	}
	stage.WaitAborted(t, s.ns)
	stage.WaitPods(t, s.ns, map[string]int{v1: 4})
	stage.AssertTemplate(t, s.ns, v2)
	waitStatus(t, s.ns, s.repo, s.merge, "failure", "aborted at step 1/3 by alice")

	stage.AssertHoldsAgainstReapplies(t, s.ns, v2)
	waitStatus(t, s.ns, s.repo, s.merge, "failure", "aborted at step 1/3 by alice")

	pr := waitRevertProposal(t, s)
	for _, want := range []string{"Rollout " + s.ns + "/checkout", "step 1/3", "by alice via gitea-label"} {
		if !strings.Contains(pr.Body, want) {
			t.Errorf("revert pull request body %q does not say %q", pr.Body, want)
		}
	}
	merged, err := s.repo.MergePullRequest(ctx, suite.alice, pr.Index, sdk.MergeStyleMerge)
	if err != nil {
		t.Fatal(err)
	}
	if err := suite.flux.WaitApplied(ctx, s.ns, "apps", *merged.MergedCommitID); err != nil {
		t.Fatal(err)
	}
	stage.WaitHealthyAgain(t, s.ns)
	kube.WaitDeploymentComplete(t, suite.c, s.ns, "checkout", v1)
	// The revert is the pull request's commit (the merge brings it).
	waitStatus(t, s.ns, s.repo, pr.Head.Sha, "success", "rolled back "+s.merge[:12]+": stable revision restored")
	waitStatus(t, s.ns, s.repo, s.merge, "failure", "rolled back by alice")
}

// waitRevertProposal waits for the open pull request into main that the
// gate proposes to revert s's merge, as Gitea lists it.
func waitRevertProposal(t *testing.T, s *shop) *sdk.PullRequest {
	t.Helper()
	api, err := suite.alice.API(poll.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	var found *sdk.PullRequest
	poll.Until(t, "a pull request reverting "+s.merge[:12], func() (bool, string) {
		list, _, err := api.ListRepoPullRequests(s.repo.Owner, s.repo.Name, sdk.ListPullRequestsOptions{State: sdk.StateOpen})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, pr := range list {
			if pr.Base != nil && pr.Base.Ref == "main" && strings.Contains(pr.Body, s.merge) {
				found = pr
				return true, ""
			}
			seen = append(seen, pr.Title)
		}
		return false, fmt.Sprintf("open: %q", seen)
	})
	return found
}
