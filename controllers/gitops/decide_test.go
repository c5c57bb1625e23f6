package gitops

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/gitops/scm"
)

const (
	rev    = "1111111111111111111111111111111111111111"
	revert = "2222222222222222222222222222222222222222"
	tcSHA  = "3333333333333333333333333333333333333333"
)

var (
	paused = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	before = paused.Add(-time.Minute)
	after  = paused.Add(time.Minute)
)

func policy() Policy {
	return Policy{ApproveLabel: "sluice/approve", PromoteFullLabel: "sluice/promote-full", RollbackLabel: "sluice/rollback",
		RetryLabel: "sluice/retry", RejectLabel: "sluice/reject", MinPermission: scm.PermissionWrite}
}

// abortedAt is an observation of the release of rev aborted at step 2 by
// ops via a label, at paused.
func abortedAt() Observation {
	return with(atStep(2), func(o *Observation) {
		o.Rollout.InRelease = false
		o.Rollout.Aborted = &AbortView{Step: 2, By: "ops", Via: ViaLabel, At: paused, Held: true}
		o.Labels = []Label{label("sluice/rollback", "ops", scm.PermissionWrite, before)}
		o.Applied = []Applied{{Action: ActionRollback, By: "ops", Via: ViaLabel, Key: "label:sluice/rollback@" + before.Format(time.RFC3339)}}
	})
}

// atStep is an observation of a release of rev paused at step of 3.
func atStep(step int32) Observation {
	return Observation{
		Rollout: RolloutView{Namespace: "shop", Name: "checkout", InRelease: true, Step: step, Steps: 3, Paused: true,
			PausedAt: paused, CanaryRevision: "abc123", StableRevision: "old456"},
		Revision: rev, PullRequest: 42, Policy: policy(), Context: "sluice/shop/checkout",
	}
}

func label(name, by string, perm scm.Permission, at time.Time) Label {
	return Label{AppliedLabel: scm.AppliedLabel{Name: name, AddedBy: by, AddedAt: at}, Permission: perm}
}

func with(o Observation, f func(*Observation)) Observation { f(&o); return o }

// stepKey is the key of the approval of step while it paused at paused.
func stepKey(step int32) string { return fmt.Sprintf("step:%d@%s", step, paused.Format(time.RFC3339)) }

// sameIntent compares intents but for their approvers (the quorum tests
// compare those).
func sameIntent(got, want *Intent) bool {
	if got == nil || want == nil {
		return got == want
	}
	g, w := *got, *want
	g.Approvers, w.Approvers = nil, nil
	return reflect.DeepEqual(g, w)
}

func TestDecide(t *testing.T) {
	pending1 := Post{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending,
		Description: "step 1/3 paused: add label sluice/approve to continue"}}
	abortedPost := Post{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StateFailure,
		Description: "aborted at step 2/3 by ops"}}
	tests := []struct {
		name        string
		o           Observation
		wantApply   *Intent
		wantReasons []string
		wantPosts   []Post
	}{
		{name: "paused without labels: pending status", o: atStep(1), wantPosts: []Post{pending1}},
		{
			name: "approve label by a writer after the pause approves the step",
			o:    with(atStep(1), func(o *Observation) { o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionWrite, after)} }),
			wantApply: &Intent{Action: ActionApprove, Step: 1, By: "jane", Via: ViaLabel, PullRequest: 42, At: after,
				Key: stepKey(1)},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending, Description: "step 1/3 approved by jane"}}},
		},
		{
			name: "a label on Gitea is recorded as a Gitea label",
			o: with(atStep(1), func(o *Observation) {
				o.Host = scm.HostGitea
				o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionWrite, after)}
			}),
			wantApply: &Intent{Action: ActionApprove, Step: 1, By: "jane", Via: "gitea-label", PullRequest: 42, At: after,
				Key: stepKey(1)},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending, Description: "step 1/3 approved by jane"}}},
		},
		{
			name: "the pull request's author cannot approve its release",
			o: with(atStep(1), func(o *Observation) {
				o.Authors = map[int]string{42: "Jane"}
				o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionAdmin, after)}
			}),
			wantReasons: []string{ReasonSelfApproval},
			wantPosts:   []Post{pending1},
		},
		{
			name: "nor promote it fully",
			o: with(atStep(1), func(o *Observation) {
				o.Authors = map[int]string{42: "jane"}
				o.Labels = []Label{label("sluice/promote-full", "jane", scm.PermissionWrite, after)}
			}),
			wantReasons: []string{ReasonSelfApproval},
			wantPosts:   []Post{pending1},
		},
		{
			name: "allowSelfApproval lets the author approve",
			o: with(atStep(1), func(o *Observation) {
				o.Authors = map[int]string{42: "jane"}
				o.Policy.AllowSelfApproval = true
				o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionWrite, after)}
			}),
			wantApply: &Intent{Action: ActionApprove, Step: 1, By: "jane", Via: ViaLabel, PullRequest: 42, At: after,
				Key: stepKey(1)},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending, Description: "step 1/3 approved by jane"}}},
		},
		{
			name: "the author may roll their release back",
			o: with(atStep(1), func(o *Observation) {
				o.Authors = map[int]string{42: "jane"}
				o.Labels = []Label{label("sluice/rollback", "jane", scm.PermissionWrite, after)}
			}),
			wantApply: &Intent{Action: ActionRollback, By: "jane", Via: ViaLabel, PullRequest: 42, At: after,
				Key: "label:sluice/rollback@" + after.Format(time.RFC3339)},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StateFailure, Description: "aborted at step 1/3 by jane"}}},
		},
		{
			name: "reject label beats a pending approval: a rollback recorded as a rejection by who added it",
			o: with(atStep(1), func(o *Observation) {
				o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionWrite, after), label("sluice/reject", "ops", scm.PermissionWrite, after)}
			}),
			wantApply: &Intent{Action: ActionRollback, Rejected: true, By: "ops", Via: ViaLabel, PullRequest: 42, At: after,
				Key: "label:sluice/reject@" + after.Format(time.RFC3339)},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StateFailure, Description: "rejected at step 1/3 by ops"}}},
		},
		{
			name: "reject label on another of the release's pull requests names it",
			o: with(atStep(2), func(o *Observation) {
				l := label("sluice/reject", "ops", scm.PermissionWrite, before)
				l.PullRequest = 41
				o.Labels = []Label{l}
			}),
			wantApply: &Intent{Action: ActionRollback, Rejected: true, By: "ops", Via: ViaLabel, PullRequest: 41, At: before,
				Key: "label:sluice/reject@" + before.Format(time.RFC3339) + "#41"},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StateFailure, Description: "rejected at step 2/3 by ops"}}},
		},
		{
			name: "the author may reject their release, as they may roll it back",
			o: with(atStep(1), func(o *Observation) {
				o.Authors = map[int]string{42: "jane"}
				o.Labels = []Label{label("sluice/reject", "jane", scm.PermissionWrite, after)}
			}),
			wantApply: &Intent{Action: ActionRollback, Rejected: true, By: "jane", Via: ViaLabel, PullRequest: 42, At: after,
				Key: "label:sluice/reject@" + after.Format(time.RFC3339)},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StateFailure, Description: "rejected at step 1/3 by jane"}}},
		},
		{
			name:        "reject label by a reader is refused",
			o:           with(atStep(1), func(o *Observation) { o.Labels = []Label{label("sluice/reject", "joe", scm.PermissionRead, after)} }),
			wantReasons: []string{ReasonInsufficientPermission}, wantPosts: []Post{pending1},
		},
		{
			name: "reject label on the pull request of a commit already released does nothing",
			o: with(atStep(3), func(o *Observation) {
				o.Rollout.InRelease, o.Rollout.Paused, o.Rollout.Healthy = false, false, true
				o.Tracked = true
				o.Labels = []Label{label("sluice/reject", "ops", scm.PermissionWrite, after)}
			}),
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StateSuccess, Description: "released: 3/3 steps done"}}},
		},
		{
			name: "rejected: the aborted release's failure says rejected, and the reject label is not applied again",
			o: with(abortedAt(), func(o *Observation) {
				o.Labels = []Label{label("sluice/reject", "ops", scm.PermissionWrite, before)}
				o.Applied = []Applied{{Action: ActionRollback, Rejected: true, By: "ops", Via: ViaLabel, Key: "label:sluice/reject@" + before.Format(time.RFC3339)}}
			}),
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StateFailure, Description: "rejected at step 2/3 by ops"}}},
		},
		{
			name: "rejected, then handed back to stable: failure rejected by who",
			o: with(atStep(2), func(o *Observation) {
				o.Rollout.InRelease, o.Rollout.Paused, o.Rollout.Healthy = false, false, true
				o.Applied = []Applied{{Action: ActionRollback, Rejected: true, By: "ops", Via: ViaLabel, At: before, Key: "label:sluice/reject@" + before.Format(time.RFC3339)}}
			}),
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StateFailure, Description: "rejected by ops"}}},
		},
		{
			name:        "label by a reader is refused",
			o:           with(atStep(1), func(o *Observation) { o.Labels = []Label{label("sluice/approve", "joe", scm.PermissionRead, after)} }),
			wantReasons: []string{ReasonInsufficientPermission}, wantPosts: []Post{pending1},
		},
		{
			name:        "label added before the pause is refused",
			o:           with(atStep(1), func(o *Observation) { o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionAdmin, before)} }),
			wantReasons: []string{ReasonLabelPredatesPause}, wantPosts: []Post{pending1},
		},
		{
			name:        "label of the pause's own second is refused",
			o:           with(atStep(1), func(o *Observation) { o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionAdmin, paused)} }),
			wantReasons: []string{ReasonLabelPredatesPause}, wantPosts: []Post{pending1},
		},
		{
			name: "label already applied is not applied twice",
			o: with(atStep(1), func(o *Observation) {
				o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionWrite, after)}
				o.Applied = []Applied{{Action: ActionApprove, Step: 1, By: "jane", Via: ViaLabel, Key: "label:sluice/approve@" + after.Format(time.RFC3339)}}
			}),
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending, Description: "step 1/3 approved by jane"}}},
		},
		{
			name: "user outside the allowed users is refused",
			o: with(atStep(1), func(o *Observation) {
				o.Policy.AllowedUsers = []string{"boss"}
				o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionWrite, after)}
			}),
			wantReasons: []string{ReasonNotAllowed}, wantPosts: []Post{pending1},
		},
		{
			name: "member of an allowed team approves",
			o: with(atStep(1), func(o *Observation) {
				o.Policy.AllowedTeams = []string{"acme/release-managers"}
				l := label("sluice/approve", "jane", scm.PermissionWrite, after)
				l.Teams = []string{"acme/release-managers"}
				o.Labels = []Label{l}
			}),
			wantApply: &Intent{Action: ActionApprove, Step: 1, By: "jane", Via: ViaLabel, PullRequest: 42, At: after,
				Key: stepKey(1)},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending, Description: "step 1/3 approved by jane"}}},
		},
		{
			name: "writer outside the allowed teams is refused",
			o: with(atStep(1), func(o *Observation) {
				o.Policy.AllowedTeams = []string{"acme/release-managers"}
				o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionAdmin, after)}
			}),
			wantReasons: []string{ReasonNotAllowed}, wantPosts: []Post{pending1},
		},
		{
			name: "allowed user outside the allowed teams approves",
			o: with(atStep(1), func(o *Observation) {
				o.Policy.AllowedUsers = []string{"Jane"}
				o.Policy.AllowedTeams = []string{"acme/release-managers"}
				o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionWrite, after)}
			}),
			wantApply: &Intent{Action: ActionApprove, Step: 1, By: "jane", Via: ViaLabel, PullRequest: 42, At: after,
				Key: stepKey(1)},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending, Description: "step 1/3 approved by jane"}}},
		},
		{
			name: "team member without the permission is refused",
			o: with(atStep(1), func(o *Observation) {
				o.Policy.AllowedTeams = []string{"acme/release-managers"}
				l := label("sluice/approve", "jane", scm.PermissionRead, after)
				l.Teams = []string{"acme/release-managers"}
				o.Labels = []Label{l}
			}),
			wantReasons: []string{ReasonInsufficientPermission}, wantPosts: []Post{pending1},
		},
		{
			name:        "label without a known author is refused",
			o:           with(atStep(1), func(o *Observation) { o.Labels = []Label{label("sluice/approve", "", scm.PermissionNone, after)} }),
			wantReasons: []string{ReasonUnknownActor}, wantPosts: []Post{pending1},
		},
		{
			name: "promote-full approves every step",
			o: with(atStep(1), func(o *Observation) {
				o.Labels = []Label{label("sluice/promote-full", "jane", scm.PermissionMaintain, after)}
			}),
			wantApply: &Intent{Action: ActionPromoteFull, Step: 3, By: "jane", Via: ViaLabel, PullRequest: 42, At: after, Key: stepKey(1)},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending, Description: "step 1/3 approved by jane"}}},
		},
		{
			name: "rollback label wins and turns the status to failure",
			o: with(atStep(2), func(o *Observation) {
				o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionWrite, after), label("sluice/rollback", "ops", scm.PermissionWrite, before)}
			}),
			wantApply: &Intent{Action: ActionRollback, By: "ops", Via: ViaLabel, PullRequest: 42, At: before, Key: "label:sluice/rollback@" + before.Format(time.RFC3339)},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StateFailure, Description: "aborted at step 2/3 by ops"}}},
		},
		{
			name:      "revert commit rolls back and reports on both commits",
			o:         with(atStep(2), func(o *Observation) { o.RevertedBy = revert }),
			wantApply: &Intent{Action: ActionRollback, By: revert, Via: ViaRevert, Key: revert, Commit: revert},
			wantPosts: []Post{
				{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StateFailure, Description: "aborted at step 2/3 by 222222222222"}},
				{SHA: revert, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending, Description: "rolling back 111111111111 to the stable revision"}},
			},
		},
		{
			name: "after a revert rollback the healthy rollout reports success on the revert",
			o: with(atStep(2), func(o *Observation) {
				o.Rollout.InRelease, o.Rollout.Paused, o.Rollout.Healthy = false, false, true
				o.RevertedBy = revert
				o.Applied = []Applied{{Action: ActionRollback, By: revert, Via: ViaRevert, Key: revert}}
			}),
			wantPosts: []Post{
				{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StateFailure, Description: "rolled back by 222222222222"}},
				{SHA: revert, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StateSuccess, Description: "rolled back 111111111111: stable revision restored"}},
			},
		},
		{
			name: "trailer approving a later step approves up to it",
			o: with(atStep(1), func(o *Observation) {
				o.Trailers = []TrailerCommit{{SHA: tcSHA, Identity: "jane@example.com", When: after,
					Directives: []git.Directive{{Action: git.ActionApprove, Namespace: "shop", Name: "checkout", Step: 2, Revision: rev[:7]}}}}
			}),
			wantApply: &Intent{Action: ActionApprove, Step: 2, By: "jane@example.com", Via: ViaTrailer, At: after, Key: stepKey(1), Commit: tcSHA},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending, Description: "step 1/3 approved by jane@example.com"}}},
		},
		{
			name: "trailer pinned to the canary revision applies",
			o: with(atStep(1), func(o *Observation) {
				o.Trailers = []TrailerCommit{{SHA: tcSHA, Identity: "jane@example.com", When: after,
					Directives: []git.Directive{{Action: git.ActionApprove, Namespace: "shop", Name: "checkout", Step: 1, Revision: "abc123"}}}}
			}),
			wantApply: &Intent{Action: ActionApprove, Step: 1, By: "jane@example.com", Via: ViaTrailer, At: after, Key: stepKey(1), Commit: tcSHA},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending, Description: "step 1/3 approved by jane@example.com"}}},
		},
		{
			name: "trailer naming another revision is refused",
			o: with(atStep(1), func(o *Observation) {
				o.Trailers = []TrailerCommit{{SHA: tcSHA, Identity: "jane@example.com",
					Directives: []git.Directive{{Action: git.ActionApprove, Namespace: "shop", Name: "checkout", Step: 1, Revision: "9999999"}}}}
			}),
			wantReasons: []string{ReasonOtherRevision}, wantPosts: []Post{pending1},
		},
		{
			name: "trailer naming an older step is refused",
			o: with(atStep(2), func(o *Observation) {
				o.Trailers = []TrailerCommit{{SHA: tcSHA, Identity: "jane@example.com",
					Directives: []git.Directive{{Action: git.ActionApprove, Namespace: "shop", Name: "checkout", Step: 1}}}}
			}),
			wantReasons: []string{ReasonOlderStep},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending,
				Description: "step 2/3 paused: add label sluice/approve to continue"}}},
		},
		{
			name: "unsigned trailer commit is refused when a keyring is set",
			o: with(atStep(1), func(o *Observation) {
				o.Trailers = []TrailerCommit{{SHA: tcSHA, Identity: "jane@example.com", Unverified: "commit is not signed",
					Directives: []git.Directive{{Action: git.ActionApprove, Namespace: "shop", Name: "checkout", Step: 1}}}}
			}),
			wantReasons: []string{ReasonUnverifiedCommit}, wantPosts: []Post{pending1},
		},
		{
			name: "trailer by a committer outside the allowed list is refused",
			o: with(atStep(1), func(o *Observation) {
				o.Policy.AllowedCommitters = []string{"boss@example.com"}
				o.Trailers = []TrailerCommit{{SHA: tcSHA, Identity: "jane@example.com",
					Directives: []git.Directive{{Action: git.ActionApprove, Namespace: "shop", Name: "checkout", Step: 1}}}}
			}),
			wantReasons: []string{ReasonNotAllowed}, wantPosts: []Post{pending1},
		},
		{
			name: "completed tracked release reports success",
			o: with(atStep(3), func(o *Observation) {
				o.Rollout.InRelease, o.Rollout.Paused, o.Rollout.Healthy = false, false, true
				o.Tracked = true
			}),
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StateSuccess, Description: "released: 3/3 steps done"}}},
		},
		{
			name: "healthy rollout on a commit whose release was never seen posts nothing",
			o: with(atStep(3), func(o *Observation) {
				o.Rollout.InRelease, o.Rollout.Paused, o.Rollout.Healthy = false, false, true
			}),
		},
		{
			name:      "step in progress",
			o:         with(atStep(2), func(o *Observation) { o.Rollout.Paused = false }),
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending, Description: "step 2/3 in progress"}}},
		},
		{
			name:      "aborted: failure saying at which step and by whom",
			o:         abortedAt(),
			wantPosts: []Post{abortedPost},
		},
		{
			name: "aborted: approve and promote-full labels are refused, saying what to do",
			o: with(abortedAt(), func(o *Observation) {
				o.Labels = append(o.Labels, label("sluice/approve", "jane", scm.PermissionWrite, after), label("sluice/promote-full", "lead", scm.PermissionAdmin, after))
			}),
			wantReasons: []string{ReasonRolledBack, ReasonRolledBack}, wantPosts: []Post{abortedPost},
		},
		{
			name: "aborted: an approve trailer for the revision is refused",
			o: with(abortedAt(), func(o *Observation) {
				o.Trailers = []TrailerCommit{{SHA: tcSHA, Identity: "jane@example.com", When: after,
					Directives: []git.Directive{{Action: git.ActionApprove, Namespace: "shop", Name: "checkout", Step: 2}}}}
			}),
			wantReasons: []string{ReasonRolledBack}, wantPosts: []Post{abortedPost},
		},
		{
			name: "aborted: a retry label added after the abort retries",
			o: with(abortedAt(), func(o *Observation) {
				o.Labels = append(o.Labels, label("sluice/retry", "lead", scm.PermissionWrite, after))
			}),
			wantApply: &Intent{Action: ActionRetry, By: "lead", Via: ViaLabel, PullRequest: 42, At: after, Key: "label:sluice/retry@" + after.Format(time.RFC3339)},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending, Description: "retried by lead: releasing again from step 1"}}},
		},
		{
			name: "aborted: a retry label older than the abort is refused",
			o: with(abortedAt(), func(o *Observation) {
				o.Labels = append(o.Labels, label("sluice/retry", "lead", scm.PermissionWrite, before))
			}),
			wantReasons: []string{ReasonLabelPredatesPause}, wantPosts: []Post{abortedPost},
		},
		{
			name: "aborted: a retry label by a reader is refused",
			o: with(abortedAt(), func(o *Observation) {
				o.Labels = append(o.Labels, label("sluice/retry", "joe", scm.PermissionRead, after))
			}),
			wantReasons: []string{ReasonInsufficientPermission}, wantPosts: []Post{abortedPost},
		},
		{
			name: "aborted by a label, then a revert pushed: pending on the revert until it syncs",
			o:    with(abortedAt(), func(o *Observation) { o.RevertedBy = revert }),
			wantPosts: []Post{abortedPost,
				{SHA: revert, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending, Description: "rolling back 111111111111 to the stable revision"}}},
		},
		{
			name: "retried: the release goes on, approvals apply again, the old rollback label does not",
			o: with(atStep(1), func(o *Observation) {
				o.Labels = []Label{label("sluice/rollback", "ops", scm.PermissionWrite, before), label("sluice/approve", "jane", scm.PermissionWrite, after)}
				o.Applied = []Applied{{Action: ActionRollback, By: "ops", Via: ViaLabel, Key: "label:sluice/rollback@" + before.Format(time.RFC3339)},
					{Action: ActionRetry, By: "lead", Via: ViaLabel, Key: "label:sluice/retry@" + before.Format(time.RFC3339)}}
			}),
			wantApply: &Intent{Action: ActionApprove, Step: 1, By: "jane", Via: ViaLabel, PullRequest: 42, At: after, Key: stepKey(1)},
			wantPosts: []Post{{SHA: rev, Status: scm.CommitStatus{Context: "sluice/shop/checkout", State: scm.StatePending, Description: "step 1/3 approved by jane"}}},
		},
		{
			name: "retried on the Rollout itself (kubectl sluice retry): the recorded rollback no longer fails the commit",
			o: with(atStep(1), func(o *Observation) {
				o.Rollout.RetriedAt = after
				o.Applied = []Applied{{Action: ActionRollback, By: "ops", Via: ViaLabel, At: before, Key: "label:sluice/rollback@" + before.Format(time.RFC3339)}}
			}),
			wantPosts: []Post{pending1},
		},
		{
			name:      "a retry label with nothing aborted does nothing",
			o:         with(atStep(1), func(o *Observation) { o.Labels = []Label{label("sluice/retry", "lead", scm.PermissionWrite, after)} }),
			wantPosts: []Post{pending1},
		},
		{
			name: "labels on a healthy rollout do nothing",
			o: with(atStep(3), func(o *Observation) {
				o.Rollout.InRelease, o.Rollout.Healthy = false, true
				o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionWrite, after)}
			}),
			wantPosts: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.o)
			if !sameIntent(d.Apply, tt.wantApply) {
				t.Errorf("Apply = %+v, want %+v", d.Apply, tt.wantApply)
			}
			var reasons []string
			for _, r := range d.Rejections {
				reasons = append(reasons, r.Reason)
			}
			if len(reasons) != len(tt.wantReasons) {
				t.Fatalf("rejections = %+v, want reasons %v", d.Rejections, tt.wantReasons)
			}
			for i := range reasons {
				if reasons[i] != tt.wantReasons[i] {
					t.Errorf("rejection %d = %+v, want reason %s", i, d.Rejections[i], tt.wantReasons[i])
				}
			}
			if len(d.Posts) != len(tt.wantPosts) {
				t.Fatalf("posts = %+v, want %+v", d.Posts, tt.wantPosts)
			}
			for i := range d.Posts {
				if d.Posts[i] != tt.wantPosts[i] {
					t.Errorf("post %d = %+v, want %+v", i, d.Posts[i], tt.wantPosts[i])
				}
			}
		})
	}
}

func TestDecide_refusalWhileRejected_saysRejected(t *testing.T) {
	approve := label("sluice/approve", "jane", scm.PermissionWrite, after)
	for _, tc := range []struct {
		name string
		o    Observation
		want string
	}{
		{"rolled back", with(abortedAt(), func(o *Observation) { o.Labels = append(o.Labels, approve) }), rolledBackAdvice},
		{"rejected", with(abortedAt(), func(o *Observation) {
			o.Applied[0].Rejected = true
			o.Labels = append(o.Labels, approve)
		}), rejectedAdvice},
	} {
		d := Decide(tc.o)
		if len(d.Rejections) != 1 || !strings.HasSuffix(d.Rejections[0].Message, ": "+tc.want) {
			t.Errorf("%s: rejections %+v, want one ending in %q", tc.name, d.Rejections, tc.want)
		}
	}
}
