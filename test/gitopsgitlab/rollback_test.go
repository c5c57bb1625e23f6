package gitopsgitlab

import (
	"strings"
	"testing"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	"github.com/sluice-dev/sluice/test/gitopsstory"
	"github.com/sluice-dev/sluice/test/gitopsworld"
	"github.com/sluice-dev/sluice/test/gitserver"
	"github.com/sluice-dev/sluice/test/kube"
	"github.com/sluice-dev/sluice/test/poll"
)

// Story: a rollback label on GitLab holds against Flux. Alice adds
// sluice/rollback to the merged merge request of a release paused at step
// 1: the release is aborted, every pod back on v1, and the merge's running
// status turns failed "aborted at step 1/3 by alice". The pod
// template stays v2, as in Git, and Flux applying the merge again (drift
// correction) neither changes it nor starts the release again. The gate
// (spec.scm.proposeRevert) has GitLab revert the merge on a branch, with
// GitLab's revert API, and opens a merge request of it saying which
// Rollout, step and who. When Alice merges it and Flux applies the merge,
// the rollback completes: v1 everywhere, success on the revert, and a new
// failed status "rolled back by alice" on the release's merge (GitLab starts
// a new status once one finished).
func TestGitGate_onGitLab_rollbackLabel_holdsAgainstFluxAndProposesTheRevert(t *testing.T) {
	s := openShop(t, shopOptions{prefix: "gitlab-rollback", gate: func(g *gitopsv1alpha1.GitGate) { g.Spec.SCM.ProposeRevert = true }})
	ns := s.ns
	stage.WaitPods(t, ns, map[string]int{gitopsstory.V1: 3, gitopsstory.V2: 1})

	gitopsstory.AfterPause(t, s.paused)
	s.gl.AddLabels(project, s.mr.IID, "alice", "sluice/rollback")
	stage.WaitAborted(t, ns)
	stage.WaitPods(t, ns, map[string]int{gitopsstory.V1: 4})
	stage.AssertTemplate(t, ns, gitopsstory.V2)
	if st := waitStatus(t, s, s.released, "failed", "aborted at step 1/3 by alice"); !st.Started {
		t.Errorf("the failed status %+v did not come from running", st)
	}
	aborted := len(statuses(s, s.released))

	stage.AssertHoldsAgainstReapplies(t, ns, gitopsstory.V2)
	if st := statuses(s, s.released); len(st) != aborted || latest(s, s.released).Description != "aborted at step 1/3 by alice" {
		t.Errorf("statuses on the merge after the re-applies = %+v, want no new one", st)
	}

	// The revert merge request: GitLab's revert of the merge, against its
	// first parent, with the files Git has.
	proposal := waitRevertProposal(t, s, s.released)
	for _, want := range []string{"Rollout " + ns + "/checkout", "step 1/3", "by alice via gitlab-label"} {
		if !strings.Contains(proposal.Description, want) {
			t.Errorf("revert merge request description %q does not say %q", proposal.Description, want)
		}
	}
	if got := s.gl.CommitFiles(project, proposal.Head)["apps/checkout.yaml"]; got != gitopsworld.DeploymentYAML("v1") || proposal.SourceBranch != "sluice/revert-"+s.released[:12] {
		t.Fatalf("revert merge request !%d from %s has apps/checkout.yaml %q, want v1's from sluice/revert-%s", proposal.IID, proposal.SourceBranch, got, s.released[:12])
	}

	// Alice merges it. Git is the source of truth of this setting, so the
	// branch's commit is written in Git as GitLab's revert API wrote it (by
	// the bot, undoing the merge against its first parent) and pushed, and
	// the merge request merged with a merge commit.
	head, err := s.project.Git.Head("main")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.project.Git.Branch(proposal.SourceBranch, head); err != nil {
		t.Fatal(err)
	}
	if _, err := s.project.Git.Revert(proposal.SourceBranch, s.released, gitserver.RevertOptions{Mainline: 1, Author: gitopsworld.Signature(botUser)}); err != nil {
		t.Fatal(err)
	}
	revert, err := s.project.Push(proposal.SourceBranch, botUser)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := s.project.Merge(gitopsworld.MergeRequest{IID: proposal.IID, Branch: proposal.SourceBranch, Title: proposal.Title}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	stage.WaitApplied(t, ns, merged)
	stage.WaitHealthyAgain(t, ns)
	kube.WaitDeploymentComplete(t, suite.c, ns, "checkout", gitopsstory.V1)
	waitStatus(t, s, revert, "success", "rolled back "+s.released[:12]+": stable revision restored")
	waitStatus(t, s, s.released, "failed", "rolled back by alice")
	if st := statuses(s, s.released); len(st) != aborted+1 || st[aborted-1].Description != "aborted at step 1/3 by alice" {
		t.Errorf("statuses on the merge = %+v, want the aborted one kept and a new one once the rollback completed", st)
	}
}

// Story: a team on GitLab reverts the merge. Alice pushes `git revert -m 1`
// of the merge commit to main while Flux is suspended: sluice reads the
// revert from Git before any sync and aborts the release, every pod back on
// v1 and the pod template left as Git had it (v2). The merge's status turns
// failed "aborted at step 1/3 by <revert>", the revert's is running. When
// Flux syncs the revert, the rollback completes: v1 everywhere, success on
// the revert, failed "rolled back by <revert>" on the merge.
func TestGitGate_onGitLab_gitRevert_rollsBackBeforeTheSync(t *testing.T) {
	ctx := poll.Context(t)
	s := openShop(t, shopOptions{prefix: "gitlab-revert"})
	ns := s.ns
	stage.WaitPods(t, ns, map[string]int{gitopsstory.V1: 3, gitopsstory.V2: 1})

	if err := suite.flux.Suspend(ctx, ns, gitopsstory.Kustomization); err != nil {
		t.Fatal(err)
	}
	revert, err := s.project.Revert(s.released, "alice")
	if err != nil {
		t.Fatal(err)
	}
	stage.WaitAborted(t, ns)
	stage.WaitPods(t, ns, map[string]int{gitopsstory.V1: 4})
	stage.AssertTemplate(t, ns, gitopsstory.V2)
	waitStatus(t, s, s.released, "failed", "aborted at step 1/3 by "+revert[:12])
	waitStatus(t, s, revert, "running", "rolling back "+s.released[:12]+" to the stable revision")
	stage.AssertStaysAborted(t, ns, 4)

	if err := suite.flux.Resume(ctx, ns, gitopsstory.Kustomization); err != nil {
		t.Fatal(err)
	}
	stage.WaitApplied(t, ns, revert)
	stage.WaitHealthyAgain(t, ns)
	kube.WaitDeploymentComplete(t, suite.c, ns, "checkout", gitopsstory.V1)
	if st := waitStatus(t, s, revert, "success", "rolled back "+s.released[:12]+": stable revision restored"); !st.Started {
		t.Errorf("the revert's success %+v did not come from running", st)
	}
	waitStatus(t, s, s.released, "failed", "rolled back by "+revert[:12])
}
