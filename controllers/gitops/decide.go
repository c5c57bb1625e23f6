package gitops

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/gitops/command"
	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// Action is what an intent asks of a Rollout.
type Action string

// The actions.
const (
	// ActionApprove approves the steps up to Intent.Step.
	ActionApprove Action = "Approve"
	// ActionPromoteFull approves every remaining step.
	ActionPromoteFull Action = "PromoteFull"
	// ActionRollback aborts the release: every pod and all traffic back on
	// the stable revision at once, the pod template left as Git has it.
	ActionRollback Action = "Rollback"
	// ActionRetry releases an aborted revision again from step 1.
	ActionRetry Action = "Retry"
)

// The ways an intent reaches sluice, as recorded in approvals.
const (
	// ViaLabel is a pull-request label on GitHub; on the other hosts a
	// label is recorded as "<host>-label" (gitea-label, gitlab-label).
	ViaLabel = "github-label"
	// ViaTrailer is a commit trailer.
	ViaTrailer = "git-trailer"
	// ViaRevert is a commit reverting the revision.
	ViaRevert = "git-revert"
	// ViaStepTimeout is a paused step that waited its StepTimeout for an
	// approval.
	ViaStepTimeout = "approval-timeout"
)

// Reasons of the events a rejected intent raises.
const (
	// ReasonInsufficientPermission: the label's author lacks the permission.
	ReasonInsufficientPermission = "InsufficientPermission"
	// ReasonSelfApproval: the author of the pull request that brought the
	// release approved it, and the policy separates the duties.
	ReasonSelfApproval = "SelfApproval"
	// ReasonNotAllowed: the author is not in the allowed users or committers.
	ReasonNotAllowed = "ApproverNotAllowed"
	// ReasonLabelPredatesPause: the label was added before the step paused.
	ReasonLabelPredatesPause = "LabelPredatesPause"
	// ReasonOtherRevision: the trailer names another revision.
	ReasonOtherRevision = "OtherRevision"
	// ReasonOlderStep: the trailer approves a step already passed.
	ReasonOlderStep = "OlderStep"
	// ReasonUnverifiedCommit: the trailer commit's signature does not verify.
	ReasonUnverifiedCommit = "UnverifiedCommit"
	// ReasonNotPaused: nothing waits for an approval.
	ReasonNotPaused = "NotPaused"
	// ReasonUnknownActor: GitHub does not say who added the label.
	ReasonUnknownActor = "UnknownActor"
	// ReasonRolledBack: the release of the revision is aborted; only a
	// retry, the revert syncing or a new commit moves it.
	ReasonRolledBack = "RolledBack"
)

// ReasonRejected is the event of a rejection applied (not refused): the
// reject label aborted the release of the commit.
const ReasonRejected = "Rejected"

// rolledBackAdvice is what a refusal of an aborted revision says to do.
const rolledBackAdvice = "rolled back; revert the commit in Git, or push a new one"

// rejectedAdvice is rolledBackAdvice for a revision the reject label
// aborted.
const rejectedAdvice = "rejected; revert the commit in Git, or push a new one"

// Decide computes what to do for one bound Rollout. It is pure: the same
// observation gives the same decision.
func Decide(o Observation) Decision {
	var d Decision
	switch {
	case o.Rollout.Aborted != nil:
		// Held on the stable revision: only a retry applies; every other
		// intent for this revision is refused, saying what to do.
		d.Apply, d.Rejections = o.whileAborted()
		d.Rejections = append(d.Rejections, o.pressesWhileAborted()...)
	case o.RevertedBy != "" && o.Rollout.InRelease && !o.applied(o.RevertedBy):
		d.Apply = &Intent{Action: ActionRollback, By: o.RevertedBy, Via: ViaRevert, Key: o.RevertedBy, Commit: o.RevertedBy}
	default:
		d.Apply, d.Rejections = o.fromStops()
		if d.Apply == nil {
			var more []Rejection
			d.Apply, more = o.pressStop()
			d.Rejections = append(d.Rejections, more...)
		}
		if d.Apply == nil {
			var more []Rejection
			d.Apply, more = o.trailerStop()
			d.Rejections = append(d.Rejections, more...)
		}
		ballots, more := o.ballots()
		d.Rejections = append(d.Rejections, more...)
		if o.Rollout.InRelease && o.Rollout.Steps > 0 && (o.Rollout.Paused || len(ballots) > 0) {
			var in *Intent
			in, d.Quorum = o.count(ballots)
			switch {
			case o.applied(o.stepKey()):
				d.Quorum = nil // approved: the Rollout has not moved on yet
			case d.Apply == nil && in != nil:
				d.Apply = in
			case d.Apply == nil && in == nil:
				d.WakeAt = o.expiresAt(d.Quorum)
			}
		}
		if !o.Rollout.Paused && d.Quorum != nil && len(d.Quorum.Approvers) == 0 {
			d.Quorum = nil // nothing waits for an approval yet
		}
		if d.Apply == nil {
			in, wake := o.fromTimeout()
			d.Apply = in
			if !wake.IsZero() && (d.WakeAt.IsZero() || wake.Before(d.WakeAt)) {
				d.WakeAt = wake
			}
		}
	}
	if o.Rollout.InRelease || o.Rollout.Aborted != nil {
		d.Rejections = append(d.Rejections, o.invalidCommands()...)
	}
	d.Posts, d.Message = o.statuses(d.Apply, d.Quorum)
	if d.Apply != nil {
		return d
	}
	if late, _ := o.Policy.overdue(o.Rollout, o.Now); late {
		d.Message += fmt.Sprintf("; overdue: waiting longer than %s for an approval", o.Policy.StepTimeout)
		for i := range d.Posts {
			if d.Posts[i].SHA == o.Revision && d.Posts[i].Status.State == scm.StatePending {
				d.Posts[i].Status.Description = d.Message
			}
		}
	}
	return d
}

// fromTimeout aborts the release of a step that waited longer than the
// policy's StepTimeout for its approval (unless the policy waits past it),
// once per paused step; before that it says when to look again.
func (o Observation) fromTimeout() (*Intent, time.Time) {
	late, deadline := o.Policy.overdue(o.Rollout, o.Now)
	switch {
	case deadline.IsZero() || o.Policy.WaitPastTimeout:
		return nil, time.Time{}
	case !late:
		return nil, deadline
	}
	key := fmt.Sprintf("timeout:%d@%s", o.Rollout.Step, o.Rollout.PausedAt.UTC().Format(time.RFC3339))
	if o.applied(key) {
		return nil, time.Time{}
	}
	return &Intent{Action: ActionRollback, By: "sluice", Via: ViaStepTimeout, At: deadline, Key: key}, time.Time{}
}

// rolledBack returns the rollback applied to the release, if any, unless
// it was retried since (by the gate, or on the Rollout itself).
func (o Observation) rolledBack() *Applied {
	for i := len(o.Applied) - 1; i >= 0; i-- {
		switch a := &o.Applied[i]; a.Action {
		case ActionRetry:
			return nil
		case ActionRollback:
			if o.Rollout.RetriedAt.After(a.At) {
				return nil
			}
			return a
		case ActionApprove, ActionPromoteFull:
		}
	}
	return nil
}

// abortedAdvice is what a refusal of the aborted release says to do: it
// names a rejection as such.
func (o Observation) abortedAdvice() string {
	if rb := o.rolledBack(); rb != nil && rb.Rejected {
		return rejectedAdvice
	}
	return rolledBackAdvice
}

// whileAborted finds the intent to apply to an aborted release (a retry
// label or command) and refuses the others that would apply to its
// revision.
func (o Observation) whileAborted() (*Intent, []Rejection) {
	var rejections []Rejection
	p, r := o.Policy, o.Rollout
	var retry *Intent
	for _, s := range o.stops(ActionRetry, false) {
		if o.applied(s.key) {
			continue
		}
		if reason, msg := o.refuseStop(s); reason != "" {
			rejections = append(rejections, s.refusal(reason, msg))
			continue
		}
		if retry == nil {
			retry = s.intent()
		}
	}
	for _, l := range o.Labels {
		if o.applied(o.labelKey(l)) {
			continue
		}
		if strings.EqualFold(l.Name, p.ApproveLabel) || strings.EqualFold(l.Name, p.PromoteFullLabel) {
			rejections = append(rejections, Rejection{Reason: ReasonRolledBack, By: l.AddedBy, Via: o.labelVia(), At: l.AddedAt, PullRequest: o.prOf(l),
				Message: fmt.Sprintf("label %s on pull request #%d added by %s: %s", l.Name, o.prOf(l), l.AddedBy, o.abortedAdvice())})
		}
	}
	for _, c := range o.Comments {
		if c.Problem != "" || c.Verb != command.Approve && c.Verb != command.PromoteFull || !c.Addresses(r.Namespace, r.Name) ||
			o.applied(commentKey(c)) || r.Aborted != nil && !c.At.After(r.Aborted.At) {
			continue
		}
		rejections = append(rejections, Rejection{Reason: ReasonRolledBack, By: c.Login, Via: viaOf(o.Host, viaComment), At: c.At, PullRequest: c.PullRequest,
			Message: describeComment(c) + ": " + o.abortedAdvice()})
	}
	for _, c := range o.Trailers {
		if o.applied("commit:" + c.SHA) {
			continue
		}
		for _, dir := range c.Directives {
			if dir.Action == git.ActionRollback || dir.Revision != "" && !o.namesRevision(dir.Revision) {
				continue
			}
			rejections = append(rejections, Rejection{Reason: ReasonRolledBack, By: c.Identity, Via: ViaTrailer, At: c.When, Commit: c.SHA,
				Message: fmt.Sprintf("trailer %q in commit %s: %s", dir.String(), short(c.SHA), o.abortedAdvice())})
		}
	}
	return retry, append(rejections, o.declaredWhileAborted()...)
}

// applied tells whether what key identifies was applied to the release:
// an intent, or an individual approval of a quorum.
func (o Observation) applied(key string) bool {
	for _, a := range o.Applied {
		if a.Key == key || slices.Contains(a.Keys, key) {
			return true
		}
	}
	return false
}

// trailerStop finds a rollback trailer to apply, refusing the rollback
// trailers that apply to nothing.
func (o Observation) trailerStop() (*Intent, []Rejection) {
	var rejections []Rejection
	r := o.Rollout
	for _, c := range o.Trailers {
		if o.applied("commit:"+c.SHA) || !r.InRelease {
			continue
		}
		for _, dir := range c.Directives {
			if dir.Action != git.ActionRollback {
				continue
			}
			what := fmt.Sprintf("trailer %q in commit %s", dir.String(), short(c.SHA))
			refuse := func(reason, msg string) {
				rejections = append(rejections, Rejection{Reason: reason, Message: msg, By: c.Identity, Via: ViaTrailer, At: c.When, Commit: c.SHA})
			}
			switch {
			case c.Unverified != "":
				refuse(ReasonUnverifiedCommit, what+": "+c.Unverified)
			case !o.Policy.committerAllowed(c):
				refuse(ReasonNotAllowed, what+": "+c.Identity+" is not one of the allowed committers")
			case dir.Revision != "" && !o.namesRevision(dir.Revision):
				refuse(ReasonOtherRevision, fmt.Sprintf("%s: names revision %s, the release is of %s (%s)", what, dir.Revision, short(o.Revision), r.CanaryRevision))
			default:
				return &Intent{Action: ActionRollback, By: c.Identity, Via: ViaTrailer, At: c.When, Key: "commit:" + c.SHA, Commit: c.SHA}, rejections
			}
		}
	}
	return nil, rejections
}

// namesRevision tells whether rev names the release: a prefix (7+ hex) of
// the commit, or the canary revision.
func (o Observation) namesRevision(rev string) bool {
	rev = strings.ToLower(rev)
	if rev == strings.ToLower(o.Rollout.CanaryRevision) {
		return true
	}
	if len(rev) < 7 {
		return false
	}
	for _, sha := range o.releaseSHAs() {
		if strings.HasPrefix(sha, rev) {
			return true
		}
	}
	return false
}

// labelVia is how a label of the gate's host is recorded: github-label,
// gitea-label, gitlab-label.
func (o Observation) labelVia() string {
	return labelVia(o.Host)
}

func labelVia(host scm.Host) string {
	if host == "" || host == scm.HostGitHub {
		return ViaLabel
	}
	return string(host) + "-label"
}

// isLabel tells whether via is a label of any host.
func isLabel(via string) bool {
	return strings.HasSuffix(via, "-label")
}
