package gitops

import (
	"fmt"
	"testing"
	"time"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// Story 1: a developer merges a pull request that bumps the image; the
// GitOps tool applies it and the Rollout pauses after step 1; the merge
// commit shows a pending status; a reviewer with write permission adds the
// label sluice/approve and step 2 starts; the Rollout records who approved
// which step of which revision; at the end the status is success.
func TestGitGate_approveByPullRequestLabel_advancesStepsAndReportsStatus(t *testing.T) {
	w := newWorld(t, nil)
	w.gh.SetRole(ghRepo, "reviewer", githubfake.RoleWrite)

	// Given PR #n bumping the image to v2, merged and applied by Flux.
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "reviewer", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)

	// Then the release pauses after step 1 with 1 pod of v2, and the merge
	// commit shows a pending status with a link.
	ro := w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)
	st := w.waitStatus(merge, "pending", "step 1/3 paused: add label sluice/approve to continue")
	if want := "https://sluice.example/" + w.ns + "/checkout?revision=" + merge; st.TargetURL != want {
		t.Errorf("target URL = %q, want %q", st.TargetURL, want)
	}
	canary := ro.Status.CanaryStatus.CanaryRevision
	g := w.getGate()
	if b := g.Status.Rollouts[0]; b.Revision != merge || b.PullRequest != pr || b.Step != 1 || b.Steps != 3 {
		t.Errorf("gate status for checkout = %+v, want revision %s, PR %d, step 1/3", b, merge, pr)
	}

	// When the reviewer adds the label sluice/approve.
	w.afterPause()
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "reviewer")

	// Then step 2 runs (2 pods of v2) and pauses, and the status says so.
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(2, 2)
	w.waitStatus(merge, "pending", "step 2/3 paused: add label sluice/approve to continue")
	records := w.approvals()
	if len(records) != 1 || records[0].Step != 1 || records[0].Revision != canary || records[0].By != "reviewer" || records[0].Via != "github-label" {
		t.Fatalf("approval record = %+v, want step 1 of %s by reviewer via github-label", records, canary)
	}
	g = w.getGate()
	if a := g.Status.Rollouts[0].Approvals; len(a) != 1 || a[0].By != "reviewer" || a[0].Step != 1 || a[0].Via != "github-label" {
		t.Errorf("gate approvals = %+v, want step 1 by reviewer via github-label", a)
	}
	// The label still on the pull request approves nothing more: it was
	// added before step 2 paused.
	w.waitEvent("Rollout", "checkout", "LabelPredatesPause", "before step 2/3 paused")
	if got := w.rollout().Status.CurrentStepIndex; got != 2 {
		t.Fatalf("step = %d after the old label, want 2", got)
	}

	// When the reviewer adds the label again.
	w.afterPause()
	w.gh.RemoveLabel(ghRepo, pr, "sluice/approve", "reviewer")
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "reviewer")

	// Then the release completes, every pod runs v2, and the status is success.
	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.waitDeployment("v2", 4)
	w.waitStatus(merge, "success", "released: 3/3 steps done")
	records = w.approvals()
	if len(records) != 2 || records[1].Step != 2 || records[1].By != "reviewer" || records[1].Via != "github-label" || records[1].Revision != canary {
		t.Fatalf("approval records = %+v, want step 2 of %s by reviewer via github-label last", records, canary)
	}
	// Each state was posted once.
	for _, d := range []string{"step 1/3 paused: add label sluice/approve to continue", "step 2/3 paused: add label sluice/approve to continue", "released: 3/3 steps done"} {
		state := "pending"
		if d == "released: 3/3 steps done" {
			state = "success"
		}
		if n := w.statusCount(merge, state, d); n != 1 {
			t.Errorf("status %q posted %d times, want once", d, n)
		}
	}
}

// waitDeploymentSplit waits until checkout runs stable pods of v1 and
// canary pods of v2.
func (w *world) waitDeploymentSplit(stable, canary int) {
	w.t.Helper()
	w.eventually("pods v1/v2", func() (bool, string) {
		pods := w.podsByImage()
		return pods["v1"] == stable && pods["v2"] == canary, fmt.Sprint(pods)
	})
}

// afterPause waits until the clock is past the second the current step
// paused in: GitHub and Kubernetes both keep whole seconds, and a label of
// the pause's own second does not count (it may be older).
func (w *world) afterPause() {
	w.t.Helper()
	paused := w.rollout().Status.CanaryStatus.LastUpdateTime.Time
	w.eventually("the second after the pause", func() (bool, string) {
		return time.Now().Truncate(time.Second).After(paused), paused.String()
	})
}

// afterSecond waits until the clock is in the next second.
func (w *world) afterSecond() {
	w.t.Helper()
	now := time.Now().Truncate(time.Second)
	w.eventually("the next second", func() (bool, string) {
		return time.Now().Truncate(time.Second).After(now), now.String()
	})
}
