package gitops

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// Story: declarative approval written in Git. While the release of a
// merge is paused at step 1, a follow-up commit sets the Rollout's
// sluice.dev/approve annotation to a value naming another commit (a stale
// copy from the previous release): Flux applies it and it approves
// nothing, saying why. A second follow-up commit by Jane names the merge
// being released, "step=2,revision=<its SHA>": Flux applies it and steps 1
// and 2 are approved, recorded as Jane's (the author of the commit that set
// the value), via git, with that commit.
func TestGitGate_declarativeApprovalInGit_namesTheCommitBeingReleased(t *testing.T) {
	w := newWorld(t, nil)
	first, err := w.repo.Head("main")
	if err != nil {
		t.Fatal(err)
	}
	_, merge := w.mergePullRequest("Bump checkout to v2", "dev", "dev", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)
	// The gate has tied the release to the merge (on a loaded machine it
	// may first see the release after a later commit was applied, and then
	// ties it to that head, as it would for any sync bringing several).
	w.waitGate("the release tied to the merge", func(g *gitopsv1alpha1.GitGate) bool {
		return len(g.Status.Rollouts) == 1 && g.Status.Rollouts[0].Revision == merge
	})
	jane := &object.Signature{Name: "Jane", Email: "jane@example.com"}

	// When a follow-up commit names another commit.
	staleValue := "step=2,revision=" + first[:10]
	stale, err := w.repo.Commit("main", gitserver.Change{Message: "Approve checkout (stale)", Author: jane,
		Files: map[string]string{rolloutManifest: w.rolloutYAMLWith(staleValue)}})
	if err != nil {
		t.Fatal(err)
	}
	w.mirror("main", stale)
	w.waitApplied(stale)

	// Then it approves nothing and says why.
	w.waitEvent("Rollout", "checkout", "OtherRevision", "names commit "+first[:10]+", the release is of commit "+merge[:12])
	w.waitGate("the stale value refused", func(g *gitopsv1alpha1.GitGate) bool {
		return refused(g, "OtherRevision", staleValue, "set in commit "+stale[:12]+" by jane@example.com")
	})
	if ro := w.rollout(); ro.Status.CurrentStepIndex != 1 || len(w.approvals()) != 0 {
		t.Fatalf("step %d with approvals %+v after a stale value, want step 1 and none", ro.Status.CurrentStepIndex, w.approvals())
	}

	// When Jane's follow-up commit names the merge being released.
	good, err := w.repo.Commit("main", gitserver.Change{Message: "Approve checkout up to step 2", Author: jane,
		Files: map[string]string{rolloutManifest: w.rolloutYAMLWith("step=2,revision=" + merge[:10])}})
	if err != nil {
		t.Fatal(err)
	}
	w.mirror("main", good)
	w.waitApplied(good)

	// Then steps 1 and 2 are approved and the release completes, recorded
	// as Jane's via git with her commit; the status stays on the merge.
	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.waitDeployment("v2", 4)
	w.assertApprovedInGit(good)
	w.waitStatus(merge, "success", "released: 3/3 steps done")
}

// Story: a declarative approval in Git that names the pod-template hash.
// While the release of a merge is paused at step 1, Jane copies the canary
// revision from the cluster into a follow-up commit,
// "step=2,revision=<pod-template-hash>". The GitGate binds the Rollout, so
// the value Flux applies is not taken with Flux's identity (that would get
// around the gate's allowed committers): steps 1 and 2 are approved as
// Jane's, the author of the commit that set it, via git, with that commit.
func TestGitGate_declarativeApprovalOfTheCanaryRevision_isTheCommitAuthors(t *testing.T) {
	w := newWorld(t, func(g *gitopsv1alpha1.GitGate) {
		g.Spec.Approval.AllowedCommitters = []string{"jane@example.com"}
	})
	_, merge := w.mergePullRequest("Bump checkout to v2", "dev", "dev", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	paused := w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitGate("the release tied to the merge", func(g *gitopsv1alpha1.GitGate) bool {
		return len(g.Status.Rollouts) == 1 && g.Status.Rollouts[0].Revision == merge
	})
	hash := paused.Status.CanaryStatus.CanaryRevision
	jane := &object.Signature{Name: "Jane", Email: "jane@example.com"}

	good, err := w.repo.Commit("main", gitserver.Change{Message: "Approve checkout up to step 2", Author: jane,
		Files: map[string]string{rolloutManifest: w.rolloutYAMLWith("step=2,revision=" + hash)}})
	if err != nil {
		t.Fatal(err)
	}
	w.mirror("main", good)
	w.waitApplied(good)

	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.assertApprovedInGit(good)
	w.waitEvent("Rollout", "checkout", "ApprovalFromGit", "GitGate shop binds this Rollout")
}

// assertApprovedInGit checks that steps 1 and 2 were approved as Jane's
// via git in commit (not as the GitOps tool that applied the value).
func (w *world) assertApprovedInGit(commit string) {
	w.t.Helper()
	got := w.approvals()
	if len(got) != 2 {
		w.t.Fatalf("approvals = %+v, want steps 1 and 2", got)
	}
	for i, a := range got {
		if a.Step != int32(i+1) || a.By != "jane@example.com" || a.Via != "git" || a.Commit != commit {
			w.t.Errorf("approval %d = %+v, want step %d by jane@example.com via git in commit %s", i, a, i+1, commit[:12])
		}
	}
}

// rolloutYAMLWith is the Rollout's manifest with its sluice.dev/approve
// annotation set to approve, as a person writes it in Git.
func (w *world) rolloutYAMLWith(approve string) string {
	return strings.Replace(w.rolloutYAML(), "  labels: {app: checkout}\n",
		fmt.Sprintf("  labels: {app: checkout}\n  annotations:\n    sluice.dev/approve: %q\n", approve), 1)
}
