package gitops

import (
	"fmt"
	"strings"
	"time"
)

// labelKey identifies a label as added once; a label on a pull request
// other than the release's own names it.
func (o Observation) labelKey(l Label) string {
	k := "label:" + l.Name + "@" + l.AddedAt.UTC().Format(time.RFC3339)
	if l.PullRequest != 0 && l.PullRequest != o.PullRequest {
		k += fmt.Sprintf("#%d", l.PullRequest)
	}
	return k
}

// prOf is the number of the pull request l is on.
func (o Observation) prOf(l Label) int {
	if l.PullRequest != 0 {
		return l.PullRequest
	}
	return o.PullRequest
}

// fromLabels finds the label intent to apply: a reject label first (a
// rollback reported as a rejection), then rollback, then promote-full,
// then approve.
func (o Observation) fromLabels() (*Intent, []Rejection) {
	var rejections []Rejection
	p := o.Policy
	for _, want := range []struct {
		name   string
		action Action
		// rejected: the rollback rejects the commit.
		rejected bool
	}{
		{p.RejectLabel, ActionRollback, true},
		{p.RollbackLabel, ActionRollback, false},
		{p.PromoteFullLabel, ActionPromoteFull, false},
		{p.ApproveLabel, ActionApprove, false},
	} {
		for _, l := range o.Labels {
			if want.name == "" || !strings.EqualFold(l.Name, want.name) {
				continue
			}
			if reason, msg := o.refuseLabel(l, want.action); reason != "" {
				if reason != ReasonNotPaused {
					rejections = append(rejections, Rejection{Reason: reason, Message: msg})
				}
				continue
			}
			if o.applied(o.labelKey(l)) {
				continue // applied; the Rollout has not moved on yet
			}
			in := &Intent{Action: want.action, By: l.AddedBy, Via: o.labelVia(), At: l.AddedAt, Key: o.labelKey(l), PullRequest: o.prOf(l),
				Rejected: want.rejected}
			switch want.action {
			case ActionApprove:
				in.Step = o.Rollout.Step
			case ActionPromoteFull:
				in.Step = o.Rollout.Steps
			case ActionRollback:
			}
			return in, rejections
		}
	}
	return nil, rejections
}

// refuseLabel says why a label applies to nothing ("" when it applies).
func (o Observation) refuseLabel(l Label, action Action) (reason, message string) {
	what := fmt.Sprintf("label %s on pull request #%d", l.Name, o.prOf(l))
	if l.AddedBy != "" {
		what += " added by " + l.AddedBy
	}
	switch {
	case action == ActionRetry && o.Rollout.Aborted == nil:
		return ReasonNotPaused, what + ": no release is aborted"
	case action != ActionRetry && !o.Rollout.InRelease:
		return ReasonNotPaused, what + ": no release in progress"
	case action == ActionApprove && !o.Rollout.Paused:
		return ReasonNotPaused, what + ": the step is not paused"
	case l.AddedBy == "":
		return ReasonUnknownActor, what + ": GitHub does not say who added it; remove it and add it again"
	}
	if reason, message := o.Policy.refuseActor(l, what); reason != "" {
		return reason, message
	}
	if reason, message := o.Policy.refuseSelfApproval(l, action, o.Authors[o.prOf(l)], what); reason != "" {
		return reason, message
	}
	switch {
	case action == ActionRetry && !l.AddedAt.After(o.Rollout.Aborted.At):
		return ReasonLabelPredatesPause, fmt.Sprintf("%s: added at %s, before the release was aborted at %s; remove it and add it again to retry",
			what, l.AddedAt.UTC().Format(time.RFC3339), o.Rollout.Aborted.At.UTC().Format(time.RFC3339))
	case action != ActionRollback && action != ActionRetry && !l.AddedAt.After(o.Rollout.PausedAt):
		// Both times have whole seconds: a label of the same second as the
		// pause may be older than it, and counts for nothing.
		return ReasonLabelPredatesPause, fmt.Sprintf("%s: added at %s, before step %d/%d paused at %s; remove it and add it again to approve",
			what, l.AddedAt.UTC().Format(time.RFC3339), o.Rollout.Step, o.Rollout.Steps, o.Rollout.PausedAt.UTC().Format(time.RFC3339))
	}
	return "", ""
}
