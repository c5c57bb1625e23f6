package gitopsgitlab

import (
	"fmt"
	"testing"

	"github.com/sluice-dev/sluice/test/gitopsstory"
)

// Story: a team on GitLab. Flux applies main from the Git server; the
// GitGate names the project in spec.scm (provider gitlab). Bob opens a
// merge request bumping checkout to v2 and Alice merges it: Flux applies
// the merge, the release pauses at step 1, the merge commit shows a running
// status saying so, and the merge request gets one note from sluice.
//
// Bob's sluice/approve label is refused (he opened the merge request: its
// author cannot approve its release), so is Carol's (a Reporter may label
// but has triage permission, and write is needed); Alice's approves step 1,
// recorded as hers via gitlab-label. GitLab refuses running→running and
// changes a description only with a transition, so each new step restarts
// the status (the running one canceled, a new one running beside it): the
// merge says step 2 paused, and the note, edited in place, says so and who
// approved step 1. Dave's "/sluice approve" note approves step 2 and the
// release completes: the running status succeeds, every earlier one was
// canceled by a restart, GitLab refused no post, and the note says it was
// released.
func TestGitGate_onGitLab_labelsAndNotesApprove_statusesFollowGitLabsStateMachine(t *testing.T) {
	s := openShop(t, shopOptions{prefix: "gitlab-label"})
	ns, iid := s.ns, s.mr.IID
	if st := latest(s, s.released); !st.Started || st.Author != botUser {
		t.Fatalf("status on the merge = %+v, want a running status by %s", st, botUser)
	}
	assertRestartsOnly(t, s, s.released)
	first := waitNote(t, s, "Step 1/3 paused", "| ▶ | **1** | 1 |", "`sluice/approve`", "`/sluice approve`")

	// Bob, then Carol, add the approve label: each is refused, saying why.
	gitopsstory.AfterPause(t, s.paused)
	for _, who := range []struct{ user, reason, text string }{
		{"bob", "SelfApproval", fmt.Sprintf("bob opened pull request #%d", iid)},
		{"carol", "InsufficientPermission", "carol has triage permission, write is needed"},
	} {
		s.gl.AddLabels(project, iid, who.user, "sluice/approve")
		if r := stage.WaitRefused(t, ns, who.reason, who.text); r.By != who.user || r.Via != "gitlab-label" || int64(r.PullRequest) != iid {
			t.Errorf("refusal %+v, want %s's label on !%d", r, who.user, iid)
		}
		s.gl.RemoveLabels(project, iid, who.user, "sluice/approve")
	}
	if ro := stage.Rollout(t, ns); ro.Status.CurrentStepIndex != 1 || len(stage.Approvals(t, ns)) != 0 {
		t.Fatalf("step %d with approvals %+v after the refused labels, want step 1 and none", ro.Status.CurrentStepIndex, stage.Approvals(t, ns))
	}
	waitNote(t, s, "SelfApproval", "InsufficientPermission")

	// Alice's label approves step 1.
	s.gl.AddLabels(project, iid, "alice", "sluice/approve")
	second := stage.WaitStep(t, ns, 2)
	if got := stage.Approvals(t, ns); len(got) != 1 || got[0].Step != 1 || got[0].By != "alice" || got[0].Via != "gitlab-label" {
		t.Fatalf("approvals = %+v, want step 1 by alice via gitlab-label", got)
	}
	edited := waitNote(t, s, "Step 2/3 paused", "| ✓ | 1 |", "| ▶ | **2** |", "step 1 approved by **alice** via gitlab-label")
	if edited.ID != first.ID || edited.Edits == 0 {
		t.Fatalf("note %d (%d edits) at step 2, want note %d edited in place", edited.ID, edited.Edits, first.ID)
	}
	// The running status of step 1 was restarted to say step 2.
	waitStatus(t, s, s.released, "running", "step 2/3 paused: add label sluice/approve to continue")
	assertRestartsOnly(t, s, s.released)

	// Dave's "/sluice approve" note approves step 2; the release completes.
	gitopsstory.AfterPause(t, second)
	s.gl.CommentOnMergeRequest(project, iid, "dave", "Dashboards are green.\n\n/sluice approve")
	stage.WaitReleased(t, ns)
	got := stage.Approvals(t, ns)
	if len(got) != 2 || got[1].Step != 2 || got[1].By != "dave" || got[1].Via != "gitlab-comment" {
		t.Fatalf("approvals = %+v, want step 2 by dave via gitlab-comment", got)
	}
	if done := waitStatus(t, s, s.released, "success", "released: 3/3 steps done"); !done.Started {
		t.Errorf("the success %+v did not come from running", done)
	}
	assertRestartsOnly(t, s, s.released)
	last := waitNote(t, s, "Released: 3/3 steps done", "step 2 approved by **dave** via gitlab-comment")
	if last.ID != first.ID {
		t.Fatalf("note %d at the end, want note %d edited in place", last.ID, first.ID)
	}
}
