package gitops

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// pausedAtOne is the status of a release paused after step 1.
const pausedAtOne = "step 1/3 paused: add label sluice/approve to continue"

// Story: two pull requests bumping the image are merged within one Flux
// interval (Flux suspended meanwhile), so one sync applies both. The
// release's commits are both merge commits: each shows the release's
// status, and a label on the first pull request (not the one of the head
// Flux names) approves step 1.
func TestGitGate_twoMergesInOneSync_statusesOnBothAndEitherLabelApproves(t *testing.T) {
	w := newWorld(t, nil)
	w.gh.SetRole(ghRepo, "reviewer", githubfake.RoleWrite)
	w.suspendFlux()
	pr1, merge1 := w.mergePullRequest("Bump checkout to v2", "dev", "dev", map[string]string{manifest: deploymentYAML("v2")})
	_, merge2 := w.mergePullRequest("Bump checkout to v3", "dev", "dev", map[string]string{manifest: deploymentYAML("v3")})
	w.resumeFlux()
	w.waitApplied(merge2)

	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitSplit("v1", 3, "v3", 1)
	w.waitStatus(merge2, "pending", pausedAtOne)
	w.waitStatus(merge1, "pending", pausedAtOne)
	w.waitGate("the release's commits", func(g *gitopsv1alpha1.GitGate) bool {
		b := g.Status.Rollouts[0]
		return b.Revision == merge2 && slices.Equal(b.Commits, []string{merge1})
	})

	// When the reviewer labels the first pull request.
	w.afterPause()
	w.gh.AddLabel(ghRepo, pr1, "sluice/approve", "reviewer")

	// Then step 2 runs, recorded as the reviewer's, and both commits say so.
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitSplit("v1", 2, "v3", 2)
	const atTwo = "step 2/3 paused: add label sluice/approve to continue"
	w.waitStatus(merge2, "pending", atTwo)
	w.waitStatus(merge1, "pending", atTwo)
	if got := w.approvals(); len(got) != 1 || got[0].Step != 1 || got[0].By != "reviewer" || got[0].Via != "github-label" {
		t.Fatalf("approvals = %+v, want step 1 by reviewer via github-label", got)
	}
}

// Story: in a monorepo, the app's pull request is merged and, before Flux
// syncs, someone pushes a commit to another path. Flux names the unrelated
// head; the app's merge commit is the release's: it shows the status (so
// does the head Flux applied), and the label on its pull request approves.
func TestGitGate_appCommitUnderAnUnrelatedOne_statusOnTheAppsCommitAndItsLabelApproves(t *testing.T) {
	w := newWorld(t, nil)
	w.gh.SetRole(ghRepo, "reviewer", githubfake.RoleWrite)
	w.suspendFlux()
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "dev", map[string]string{manifest: deploymentYAML("v2")})
	other := w.commit("main", "Docs for another team", map[string]string{"docs/payments.md": "payments\n"})
	w.mirror("main", other)
	w.resumeFlux()
	w.waitApplied(other)

	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)
	w.waitStatus(merge, "pending", pausedAtOne)
	w.waitStatus(other, "pending", pausedAtOne)
	w.waitGate("the app's pull request", func(g *gitopsv1alpha1.GitGate) bool {
		b := g.Status.Rollouts[0]
		return b.PullRequest == pr && slices.Equal(b.Commits, []string{merge})
	})

	w.afterPause()
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "reviewer")
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(2, 2)
	w.waitStatus(merge, "pending", "step 2/3 paused: add label sluice/approve to continue")
}

// Story: a pull request is merged, then main is force-pushed back and
// another pull request merged in its place before Flux syncs. The dropped
// merge shows nothing and a label on its pull request approves nothing;
// the merge Flux applies shows the release and its pull request's label
// approves.
func TestGitGate_forcePushDroppedACommit_itsPullRequestCountsForNothing(t *testing.T) {
	w := newWorld(t, nil)
	w.gh.SetRole(ghRepo, "reviewer", githubfake.RoleWrite)
	w.gh.SetRole(ghRepo, "alice", githubfake.RoleWrite)
	before, err := w.repo.Head("main")
	if err != nil {
		t.Fatal(err)
	}
	w.suspendFlux()
	dropped, droppedMerge := w.mergePullRequest("Bump checkout to v2", "dev", "dev", map[string]string{manifest: deploymentYAML("v2")})
	// The force-push: main back where it was, in Git and on GitHub.
	if err := w.repo.Branch("main", before); err != nil {
		t.Fatal(err)
	}
	w.mirror("main", before)
	kept, keptMerge := w.mergePullRequest("Bump checkout to v3", "dev", "dev", map[string]string{manifest: deploymentYAML("v3")})
	w.resumeFlux()
	w.waitApplied(keptMerge)

	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitSplit("v1", 3, "v3", 1)
	w.waitStatus(keptMerge, "pending", pausedAtOne)
	g := w.waitGate("the kept merge", func(g *gitopsv1alpha1.GitGate) bool {
		b := g.Status.Rollouts[0]
		return b.Revision == keptMerge && b.PullRequest == kept
	})
	if c := g.Status.Rollouts[0].Commits; slices.Contains(c, droppedMerge) {
		t.Fatalf("release commits %v include the dropped merge %s", c, droppedMerge[:12])
	}

	// A label on the dropped pull request approves nothing: the gate reads
	// everything again and the release stays at step 1.
	w.afterPause()
	w.gh.AddLabel(ghRepo, dropped, "sluice/approve", "alice")
	w.reconciledAfter()
	if ro := w.rollout(); ro.Status.CurrentStepIndex != 1 || len(w.approvals()) != 0 {
		t.Fatalf("step %d with approvals %+v after a label on the dropped pull request, want step 1 and none", ro.Status.CurrentStepIndex, w.approvals())
	}
	if s := w.gh.Statuses(ghRepo, droppedMerge); len(s) != 0 {
		t.Errorf("the dropped merge has statuses %+v, want none", s)
	}

	w.gh.AddLabel(ghRepo, kept, "sluice/approve", "reviewer")
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	if got := w.approvals(); len(got) != 1 || got[0].By != "reviewer" {
		t.Fatalf("approvals = %+v, want one by reviewer", got)
	}
}

// waitSplit waits until checkout runs a pods of image tag from and b of to.
func (w *world) waitSplit(from string, a int, to string, b int) {
	w.t.Helper()
	w.eventually(fmt.Sprintf("pods %s/%s", from, to), func() (bool, string) {
		pods := w.podsByImage()
		return pods[from] == a && pods[to] == b && len(pods) == 2, fmt.Sprint(pods)
	})
}

// reconciledAfter asks the gate to reconcile and waits until it has
// (Flux's reconcile.fluxcd.io/requestedAt convention): whatever changed
// before the call has been read.
func (w *world) reconciledAfter() {
	w.t.Helper()
	token := time.Now().Format(time.RFC3339Nano)
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, meta.ReconcileRequestAnnotation, token))
	g := &gitopsv1alpha1.GitGate{}
	g.Namespace, g.Name = w.ns, "shop"
	if err := suite.c.Patch(ctxFor(w.t), g, client.RawPatch(types.MergePatchType, patch)); err != nil {
		w.t.Fatal(err)
	}
	w.waitGate("reconciled after "+token, func(g *gitopsv1alpha1.GitGate) bool { return g.Status.LastHandledReconcileAt == token })
}
