package gitops

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// A delivery never waits for the commit statuses of the reconcile before
// it. GitHub answers each status post slowly; a sync brings five commits
// that changed the workload, so each change of the release posts five
// statuses, one after another. The label's delivery arrives while the gate
// posts the first of them: the approval is applied before those posts are
// done (the reconcile leaves them to the next one), and every commit's
// status still ends at the release's latest state.
func TestGitGate_deliveryDuringSlowStatusPosts_isActedOnBeforeThem(t *testing.T) {
	const perPost = 1500 * time.Millisecond
	secret := []byte("hook-secret")
	w := newHookedWorld(t, secret)

	// Given four commits pushed to main and a pull request merged on top of
	// them, each changing the workload, synced by Flux at once, and GitHub
	// taking 1.5 s to answer each status post.
	w.suspendFlux()
	var shas []string
	for i := range 4 {
		sha := w.commit("main", fmt.Sprintf("Try checkout rc%d", i+1), map[string]string{manifest: deploymentYAML(fmt.Sprintf("v2-rc%d", i+1))})
		w.mirror("main", sha)
		shas = append(shas, sha)
	}
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "reviewer", map[string]string{manifest: deploymentYAML("v2")})
	shas = append(shas, merge)
	w.gh.Slow("repos/create-commit-status", perPost)
	w.resumeFlux()
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	const paused = "step 1/3 paused: add label sluice/approve to continue"
	pausedPosts := func() int {
		n := 0
		for _, sha := range shas {
			n += w.statusCount(sha, "pending", paused)
		}
		return n
	}
	// When the gate has posted the first of the five "paused" statuses and
	// the label's delivery arrives.
	w.eventually("the first paused status posted", func() (bool, string) {
		return pausedPosts() > 0, fmt.Sprintf("%d posted", pausedPosts())
	})
	w.afterPause()
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "reviewer")
	d, err := w.gh.DeliverLabel(context.Background(), suite.hookURL, secret, ghRepo, pr, "sluice/approve", "reviewer", true)
	if err != nil || d.Status != http.StatusOK {
		t.Fatalf("delivery answered %d, %v; want 200", d.Status, err)
	}

	// Then the approval is applied while the five paused statuses are not
	// all posted: the reconcile that was posting them stopped for the
	// delivery's.
	var atApproval int
	w.eventually("the label's approval on the Rollout", func() (bool, string) {
		n := pausedPosts()
		if len(w.approvals()) == 0 {
			return false, fmt.Sprintf("%d paused statuses posted", n)
		}
		atApproval = n
		return true, ""
	})
	if atApproval >= len(shas) {
		t.Fatalf("the approval came after all %d paused statuses were posted: the delivery waited for them", atApproval)
	}
	if got := w.approvals(); got[0].By != "reviewer" || got[0].Via != "github-label" || got[0].Step != 1 {
		t.Fatalf("approvals = %+v, want step 1 by reviewer via github-label", got)
	}

	// And nothing posted is lost: once GitHub answers at its usual speed,
	// every commit of the release shows step 2 paused.
	w.gh.Slow("repos/create-commit-status", 0)
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	for _, sha := range shas {
		w.waitStatus(sha, "pending", "step 2/3 paused: add label sluice/approve to continue")
	}
}
