package gitops

import (
	"testing"

	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/gitops/scm"
)

const earlier = "4444444444444444444444444444444444444444"

// A sync that brought several commits: the release's status lands on each
// commit that changed the workload and on the head.
func TestDecide_releaseCommits_eachShowsTheStatus(t *testing.T) {
	o := with(atStep(1), func(o *Observation) { o.Commits = []string{earlier} })
	d := Decide(o)
	if len(d.Posts) != 2 || d.Posts[0].SHA != rev || d.Posts[1].SHA != earlier || d.Posts[0].Status != d.Posts[1].Status {
		t.Fatalf("posts = %+v, want the same status on %s and %s", d.Posts, rev[:7], earlier[:7])
	}
}

// A label on the pull request of another of the release's commits
// approves, recorded with that pull request.
func TestDecide_labelOnAnotherCommitsPullRequest_approves(t *testing.T) {
	o := with(atStep(1), func(o *Observation) {
		o.Commits = []string{earlier}
		l := label("sluice/approve", "jane", scm.PermissionWrite, after)
		l.PullRequest = 41
		o.Labels = []Label{l}
	})
	d := Decide(o)
	want := Intent{Action: ActionApprove, Step: 1, By: "jane", Via: ViaLabel, At: after, PullRequest: 41,
		Key: stepKey(1)}
	if !sameIntent(d.Apply, &want) {
		t.Fatalf("Apply = %+v, want %+v", d.Apply, want)
	}
	// Applied, it is not applied again.
	o.Applied = []Applied{{Action: ActionApprove, Step: 1, By: "jane", Via: ViaLabel, Key: want.Key}}
	if d := Decide(o); d.Apply != nil {
		t.Fatalf("Apply = %+v after it was applied, want none", d.Apply)
	}
}

// A trailer naming any of the release's commits names the release.
func TestDecide_trailerNamingAReleaseCommit_approves(t *testing.T) {
	o := with(atStep(1), func(o *Observation) {
		o.Commits = []string{earlier}
		o.Trailers = []TrailerCommit{{SHA: tcSHA, Identity: "rm@example.com", When: after,
			Directives: []git.Directive{{Action: git.ActionApprove, Namespace: "shop", Name: "checkout", Step: 1, Revision: earlier[:8]}}}}
	})
	if d := Decide(o); d.Apply == nil || d.Apply.Action != ActionApprove || len(d.Rejections) != 0 {
		t.Fatalf("decision = %+v, want the approval", d)
	}
}

// A revert that synced before the gate saw it (the Rollout back on stable,
// never aborted) fails the revision and completes the revert's status.
func TestDecide_revertSyncedBeforeTheGateSawIt_reportsTheRollback(t *testing.T) {
	o := with(atStep(2), func(o *Observation) {
		o.Rollout.InRelease, o.Rollout.Paused, o.Rollout.Healthy = false, false, true
		o.RevertedBy, o.Tracked, o.LastPosted = revert, true, scm.StatePending
	})
	d := Decide(o)
	if len(d.Posts) != 2 || d.Posts[0].Status.State != scm.StateFailure || d.Posts[1].SHA != revert || d.Posts[1].Status.State != scm.StateSuccess {
		t.Fatalf("posts = %+v, want failure on the revision and success on the revert", d.Posts)
	}
	// Once released (success posted), a later revert is a new release, not
	// this one's failure.
	o.LastPosted = scm.StateSuccess
	if d := Decide(o); len(d.Posts) != 1 || d.Posts[0].Status.State != scm.StateSuccess {
		t.Fatalf("posts = %+v, want the released status only", d.Posts)
	}
}
