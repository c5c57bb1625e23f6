package gitopsgitea

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "code.gitea.io/sdk/gitea"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/kube"
	"github.com/sluice-dev/sluice/test/poll"
)

// The images of checkout's two versions in the stories' manifests.
const (
	v1 = "shop/checkout:v1"
	v2 = "shop/checkout:v2"
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
	waitPods(t, s.ns, map[string]int{v1: 3, v2: 1})

	if err := suite.flux.Suspend(ctx, s.ns, "apps"); err != nil {
		t.Fatal(err)
	}
	revert, err := s.alice.Revert(ctx, "main", s.merge)
	if err != nil {
		t.Fatal(err)
	}

	waitAborted(t, s.ns)
	waitPods(t, s.ns, map[string]int{v1: 4})
	assertTemplate(t, s.ns, v2)
	waitStatus(t, s.ns, s.repo, s.merge, "failure", "aborted at step 1/3 by "+revert[:12])
	waitStatus(t, s.ns, s.repo, revert, "pending", "rolling back "+s.merge[:12]+" to the stable revision")
	assertStaysAborted(t, s.ns, 4)

	if err := suite.flux.Resume(ctx, s.ns, "apps"); err != nil {
		t.Fatal(err)
	}
	if err := suite.flux.WaitApplied(ctx, s.ns, "apps", revert); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, s.ns, "Healthy after the sync", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.Aborted == nil
	})
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
	waitPods(t, s.ns, map[string]int{v1: 3, v2: 1})

	afterPause(t, s.paused)
	if err := s.repo.AddLabels(ctx, suite.alice, s.pr.Index, "sluice/rollback"); err != nil {
		t.Fatal(err)
	}
	waitAborted(t, s.ns)
	waitPods(t, s.ns, map[string]int{v1: 4})
	assertTemplate(t, s.ns, v2)
	waitStatus(t, s.ns, s.repo, s.merge, "failure", "aborted at step 1/3 by alice")

	assertHoldsAgainstReapplies(ctx, t, s.ns, v2)
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
	waitRollout(t, s.ns, "Healthy after the revert synced", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.Aborted == nil
	})
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

// waitAborted waits until the release in ns is aborted and held on the
// stable revision.
func waitAborted(t *testing.T, ns string) {
	t.Helper()
	waitRollout(t, ns, "aborted and held on stable", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseAborted && r.Status.Aborted != nil && r.Status.Aborted.Held
	})
}

// waitPods waits until checkout's live pods are want (image -> count).
func waitPods(t *testing.T, ns string, want map[string]int) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("pods %v", want), func() (bool, string) {
		got := kube.PodImages(t, suite.c, ns, "checkout")
		if len(got) != len(want) {
			return false, fmt.Sprint(got)
		}
		for image, n := range want {
			if got[image] != n {
				return false, fmt.Sprint(got)
			}
		}
		return true, ""
	})
}

// assertTemplate checks that checkout's pod template is still at image,
// as Git has it: sluice never rewrites it.
func assertTemplate(t *testing.T, ns, image string) {
	t.Helper()
	d := kube.Deployment(t, suite.c, ns, "checkout")
	if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
		t.Fatalf("pod template at %s, want %s (Git's): sluice must not change it", got, image)
	}
}

// assertHoldsAgainstReapplies has Flux apply the same commit twice more
// (drift correction) and checks after each that the template is still Git's
// (template) and the release stays aborted with 4 pods of v1.
func assertHoldsAgainstReapplies(ctx context.Context, t *testing.T, ns, template string) {
	t.Helper()
	for range 2 {
		if err := suite.flux.Reapply(ctx, ns, "apps"); err != nil {
			t.Fatal(err)
		}
		assertTemplate(t, ns, template)
		assertStaysAborted(t, ns, 4)
	}
}

// assertStaysAborted checks for a few seconds that the release in ns stays
// aborted with n pods of v1 and nothing released again.
func assertStaysAborted(t *testing.T, ns string, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ro := rollout(t, ns); ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted {
			t.Fatalf("no longer aborted: phase %s, %s", ro.Status.Phase, ro.Status.Message)
		}
		if pods := kube.PodImages(t, suite.c, ns, "checkout"); pods[v1] != n || len(pods) != 1 {
			t.Fatalf("pods %v while aborted, want %d of %s", pods, n, v1)
		}
	}
}
