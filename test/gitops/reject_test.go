package gitops

import (
	"testing"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// Story 5: a label added by someone without the required permission, a
// label that was already there before the step paused, an approval naming
// another revision and one naming an older step: none of them advances
// anything, and each is visible as an event with the reason.
func TestGitGate_unauthorisedStaleAndMisdirectedApprovals_advanceNothing(t *testing.T) {
	w := newWorld(t, nil)
	w.gh.SetRole(ghRepo, "outsider", githubfake.RoleRead)
	w.gh.SetRole(ghRepo, "reviewer", githubfake.RoleWrite)

	// Given a merged pull request labelled sluice/approve by a reviewer
	// before Flux applied it (so before any step paused): Flux is suspended
	// over the merge and the label.
	w.suspendFlux()
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "reviewer", map[string]string{manifest: deploymentYAML("v2")})
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "reviewer")
	w.afterSecond()
	w.resumeFlux()
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)

	// Then the label approves nothing: it predates the pause.
	w.waitEvent("Rollout", "checkout", "LabelPredatesPause", "label sluice/approve on pull request")
	w.waitEvent("GitGate", "shop", "LabelPredatesPause", "before step 1/3 paused")
	w.waitStatus(merge, "pending", "step 1/3 paused: add label sluice/approve to continue")

	// When someone with read permission adds sluice/promote-full.
	w.afterPause()
	w.gh.AddLabel(ghRepo, pr, "sluice/promote-full", "outsider")
	// Then it is refused for want of permission.
	w.waitEvent("Rollout", "checkout", "InsufficientPermission", "outsider has read permission, write is needed")

	// When a commit on the branch approves step 1 of another revision.
	other := w.commit("main", "Approve\n\nSluice-Approve: "+w.ns+"/checkout step=1 revision=0123456789ab", map[string]string{"NOTES.md": "1\n"})
	w.mirror("main", other)
	w.waitApplied(other) // Flux applies the commit: nothing changes in the workload
	// Then it is refused: it names another revision.
	w.waitEvent("Rollout", "checkout", "OtherRevision", "names revision 0123456789ab")

	// And through all of it the release stays at step 1 with 1 pod of v2,
	// and nothing was recorded as approved.
	ro := w.rollout()
	if ro.Status.CurrentStepIndex != 1 || ro.Status.CurrentStepState != rolloutsv1beta1.CanaryStepStatePaused {
		t.Fatalf("rollout at step %d %s, want 1 StepPaused", ro.Status.CurrentStepIndex, ro.Status.CurrentStepState)
	}
	if pods := w.podsByImage(); pods["v1"] != 3 || pods["v2"] != 1 {
		t.Fatalf("pods %v, want 3 of v1 and 1 of v2", pods)
	}
	if got := w.approvals(); len(got) != 0 {
		t.Fatalf("approvals recorded: %+v, want none", got)
	}

	// When a commit approves step 1 of this revision (story 2's trailer),
	// the release goes on to step 2.
	ok := w.commit("main", "Approve step 1\n\nSluice-Approve: "+w.ns+"/checkout step=1 revision="+merge[:12], map[string]string{"NOTES.md": "2\n"})
	w.mirror("main", ok)
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(2, 2)
	if got := w.approvals(); len(got) != 1 || got[0].Step != 1 || got[0].Via != "git-trailer" || got[0].By != "author@example.com" {
		t.Fatalf("approvals = %+v, want step 1 via git-trailer by author@example.com", got)
	}

	// When a later commit approves step 1 again (an older step now).
	old := w.commit("main", "Approve again\n\nSluice-Approve: "+w.ns+"/checkout step=1", map[string]string{"NOTES.md": "3\n"})
	w.mirror("main", old)
	// Then it is refused, and the release stays at step 2.
	w.waitEvent("Rollout", "checkout", "OlderStep", "step 1 is passed, the release is at step 2/3")
	if ro := w.rollout(); ro.Status.CurrentStepIndex != 2 || len(w.approvals()) != 1 {
		t.Fatalf("rollout at step %d with %d approvals, want step 2 with 1", ro.Status.CurrentStepIndex, len(w.approvals()))
	}
	w.waitStatus(merge, "pending", "step 2/3 paused: add label sluice/approve to continue")

	// And the gate's status lists every refusal with its reason.
	g := w.getGate()
	for _, want := range []struct{ reason, text string }{
		{"LabelPredatesPause", "before step 1/3 paused"},
		{"InsufficientPermission", "outsider has read permission"},
		{"OtherRevision", "names revision 0123456789ab"},
		{"OlderStep", "step 1 is passed"},
	} {
		if !refused(g, want.reason, want.text) {
			t.Errorf("gate status lists no %s refusal %q: %+v", want.reason, want.text, g.Status.Rollouts[0].Refused)
		}
	}
}
