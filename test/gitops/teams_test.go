package gitops

import (
	"testing"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// Story 6: with allowedTeams set, a label by a writer outside the teams is
// refused, and the same label by a member of an allowed team approves.
func TestGitGate_allowedTeams_memberApproves_writerOutsideIsRefused(t *testing.T) {
	w := newWorld(t, func(g *gitopsv1alpha1.GitGate) {
		g.Spec.Approval.AllowedTeams = []string{"acme/release-managers"}
	})
	w.gh.SetRole(ghRepo, "wes", githubfake.RoleWrite)
	w.gh.SetRole(ghRepo, "ann", githubfake.RoleWrite)
	w.gh.SetRole(ghRepo, "pat", githubfake.RoleWrite)
	w.gh.SetTeamMembership("acme/release-managers", "ann", githubfake.MembershipActive)
	w.gh.SetTeamMembership("acme/release-managers", "pat", githubfake.MembershipPending)

	// Given v2 merged, applied, paused at step 1 with 1 pod of v2.
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "dev", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)
	w.afterPause()

	// When wes (write permission, not in the team) adds sluice/approve.
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "wes")
	// Then it is refused, and the release stays at step 1 with 1 pod of v2.
	w.waitEvent("Rollout", "checkout", "ApproverNotAllowed", "added by wes: not a member of an allowed team")
	w.waitStatus(merge, "pending", "step 1/3 paused: add label sluice/approve to continue")
	if ro := w.rollout(); ro.Status.CurrentStepIndex != 1 || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("rollout at step %d %s after wes's label, want 1 StepPaused", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState)
	}
	if pods := w.podsByImage(); pods["v1"] != 3 || pods["v2"] != 1 {
		t.Fatalf("pods %v after wes's label, want 3 of v1 and 1 of v2", pods)
	}

	// When pat, invited to the team but not yet a member, adds it again.
	w.gh.RemoveLabel(ghRepo, pr, "sluice/approve", "wes")
	w.afterSecond()
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "pat")
	// Then it is refused too.
	// (Kubernetes folds the Rollout's events of one reason into a series that
	// keeps the first message; the GitGate's event is new.)
	w.waitEvent("GitGate", "shop", "ApproverNotAllowed", "added by pat: not a member of an allowed team")
	if got := w.approvals(); len(got) != 0 {
		t.Fatalf("approvals recorded: %+v, want none", got)
	}

	// When ann, an active member of acme/release-managers, adds it again.
	w.gh.RemoveLabel(ghRepo, pr, "sluice/approve", "pat")
	w.afterSecond()
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "ann")
	// Then step 1 is approved by ann: the release pauses at step 2 with 2
	// pods of v2.
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(2, 2)
	if got := w.approvals(); len(got) != 1 || got[0].Step != 1 || got[0].By != "ann" || got[0].Via != "github-label" {
		t.Fatalf("approvals = %+v, want step 1 by ann via github-label", got)
	}
	g := w.getGate()
	if !refused(g, "ApproverNotAllowed", "added by wes") {
		t.Errorf("gate status lists no ApproverNotAllowed refusal of wes: %+v", g.Status.Rollouts[0].Refused)
	}
	if n := w.gh.Count("teams/get-membership-for-user-in-org"); n == 0 {
		t.Errorf("no team membership was read")
	}
}
