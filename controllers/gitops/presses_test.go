package gitops

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/receiver"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// press is a verified press of button by who, with perm, at.
func press(button, who string, perm scm.Permission, at time.Time) ButtonPress {
	return ButtonPress{Press: receiver.Press{Repository: "acme/shop", Rollout: "shop/checkout", HeadSHA: rev, CheckRun: 7, Identifier: button,
		By: who, At: at, Delivery: "d-" + button + "-" + who}, Permission: perm}
}

// A press is an approval by the person who pressed it, under the policy a label is under.
func TestDecide_presses(t *testing.T) {
	tests := []struct {
		name       string
		o          Observation
		wantApply  *Intent
		wantReason string
		wantInMsg  string
	}{
		{
			name: "approve step 1 by a writer after the pause",
			o: with(atStep(1), func(o *Observation) {
				o.Presses = []ButtonPress{press("approve-1", "jane", scm.PermissionWrite, after)}
			}),
			wantApply: &Intent{Action: ActionApprove, Step: 1, By: "jane", Via: ViaCheckRun, At: after, Key: stepKey(1), PullRequest: 42},
		},
		{
			name:      "promote",
			o:         with(atStep(1), func(o *Observation) { o.Presses = []ButtonPress{press("promote", "jane", scm.PermissionWrite, after)} }),
			wantApply: &Intent{Action: ActionPromoteFull, Step: 3, By: "jane", Via: ViaCheckRun, At: after, Key: stepKey(1), PullRequest: 42},
		},
		{
			name: "roll back wins over an approval",
			o: with(atStep(1), func(o *Observation) {
				o.Presses = []ButtonPress{press("approve-1", "jane", scm.PermissionWrite, after), press("rollback", "ops", scm.PermissionWrite, after)}
			}),
			wantApply: &Intent{Action: ActionRollback, By: "ops", Via: ViaCheckRun, At: after, Key: "press:d-rollback-ops", PullRequest: 42},
		},
		{
			name: "a reader is refused",
			o: with(atStep(1), func(o *Observation) {
				o.Presses = []ButtonPress{press("approve-1", "mallory", scm.PermissionRead, after)}
			}),
			wantReason: ReasonInsufficientPermission, wantInMsg: "mallory has read permission, write is needed",
		},
		{
			name: "not one of the allowed users",
			o: with(atStep(1), func(o *Observation) {
				o.Policy.AllowedUsers = []string{"lead"}
				o.Presses = []ButtonPress{press("approve-1", "jane", scm.PermissionWrite, after)}
			}),
			wantReason: ReasonNotAllowed, wantInMsg: "not one of the allowed users",
		},
		{
			name: "a member of an allowed team",
			o: with(atStep(1), func(o *Observation) {
				o.Policy.AllowedTeams = []string{"acme/releasers"}
				p := press("approve-1", "jane", scm.PermissionWrite, after)
				p.Teams = []string{"acme/releasers"}
				o.Presses = []ButtonPress{p}
			}),
			wantApply: &Intent{Action: ActionApprove, Step: 1, By: "jane", Via: ViaCheckRun, At: after, Key: stepKey(1), PullRequest: 42},
		},
		{
			name: "the author of the pull request cannot approve its release",
			o: with(atStep(1), func(o *Observation) {
				o.Authors = map[int]string{42: "dev"}
				o.Presses = []ButtonPress{press("approve-1", "dev", scm.PermissionAdmin, after)}
			}),
			wantReason: ReasonSelfApproval, wantInMsg: "dev opened pull request #42",
		},
		{
			name: "the author may roll it back",
			o: with(atStep(1), func(o *Observation) {
				o.Authors = map[int]string{42: "dev"}
				o.Presses = []ButtonPress{press("rollback", "dev", scm.PermissionWrite, after)}
			}),
			wantApply: &Intent{Action: ActionRollback, By: "dev", Via: ViaCheckRun, At: after, Key: "press:d-rollback-dev", PullRequest: 42},
		},
		{
			name: "a step approved already",
			o: with(atStep(2), func(o *Observation) {
				o.Presses = []ButtonPress{press("approve-1", "jane", scm.PermissionWrite, after)}
			}),
			wantReason: ReasonOlderStep, wantInMsg: "step 1 was approved already",
		},
		{
			name: "a step not reached",
			o: with(atStep(1), func(o *Observation) {
				o.Presses = []ButtonPress{press("approve-2", "jane", scm.PermissionWrite, after)}
			}),
			wantReason: ReasonNotPaused, wantInMsg: "step 2 does not wait",
		},
		{
			name: "pressed before the step paused",
			o: with(atStep(1), func(o *Observation) {
				o.Presses = []ButtonPress{press("approve-1", "jane", scm.PermissionWrite, before)}
			}),
			wantReason: ReasonPressPredatesStep, wantInMsg: "before step 1/3 paused",
		},
		{
			name: "applied already",
			o: with(atStep(1), func(o *Observation) {
				o.Presses = []ButtonPress{press("approve-1", "jane", scm.PermissionWrite, after)}
				o.Applied = []Applied{{Action: ActionApprove, Step: 1, By: "jane", Via: ViaCheckRun, Key: "press:d-approve-1-jane"}}
			}),
		},
		{
			name: "not one of sluice's buttons",
			o: with(atStep(1), func(o *Observation) {
				o.Presses = []ButtonPress{press("deploy-now", "jane", scm.PermissionWrite, after)}
			}),
		},
		{
			name: "a label and a press by another person both approve the step",
			o: with(atStep(1), func(o *Observation) {
				o.Labels = []Label{label("sluice/approve", "lead", scm.PermissionWrite, after)}
				o.Presses = []ButtonPress{press("approve-1", "jane", scm.PermissionWrite, after)}
			}),
			wantApply: &Intent{Action: ActionApprove, Step: 1, By: "lead, jane", Via: ViaLabel + "+" + ViaCheckRun, At: after, Key: stepKey(1), PullRequest: 42},
		},
		{
			name: "a press after the release was aborted is refused with the advice",
			o: with(abortedAt(), func(o *Observation) {
				o.Presses = []ButtonPress{press("approve-2", "jane", scm.PermissionWrite, after)}
			}),
			wantReason: ReasonRolledBack, wantInMsg: "rolled back; revert the commit",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.o)
			if !sameIntent(d.Apply, tt.wantApply) {
				t.Fatalf("Apply = %+v, want %+v", d.Apply, tt.wantApply)
			}
			var reasons []string
			for _, r := range d.Rejections {
				reasons = append(reasons, r.Reason)
				if tt.wantInMsg != "" && !strings.Contains(r.Message, tt.wantInMsg) {
					t.Errorf("refusal %q does not say %q", r.Message, tt.wantInMsg)
				}
			}
			if tt.wantReason == "" && len(reasons) > 0 || tt.wantReason != "" && strings.Join(reasons, ",") != tt.wantReason {
				t.Fatalf("refusals %v, want [%s]", reasons, tt.wantReason)
			}
		})
	}
}
