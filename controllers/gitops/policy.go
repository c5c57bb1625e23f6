package gitops

import (
	"fmt"
	"strings"
	"time"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// Policy is the approval policy, defaults applied. It is the one place
// that says who may act and through which labels: the observation reads
// only the facts it asks for (Names, TeamsToAsk), and Decide refuses by it
// (refuseActor, allowed), so the policy lives in pure code only.
type Policy struct {
	// ApproveLabel, PromoteFullLabel, RollbackLabel and RetryLabel name
	// the labels.
	ApproveLabel, PromoteFullLabel, RollbackLabel, RetryLabel string
	// RejectLabel names the label that rejects the commit being released:
	// a rollback, reported as a rejection.
	RejectLabel string
	// MinPermission for labels.
	MinPermission scm.Permission
	// AllowedUsers and AllowedCommitters restrict who may act (empty: anyone
	// with the permission, or any committer).
	AllowedUsers, AllowedCommitters []string
	// AllowedTeams ("org/team-slug") admit their members' labels too: with
	// AllowedUsers, a label's author must be one of the users or a member
	// of one of the teams.
	AllowedTeams []string
	// AllowSelfApproval lets the author of a pull request approve or
	// promote its release.
	AllowSelfApproval bool
	// StepTimeout is how long a paused step waits for its approval (0:
	// for ever); past it the release is aborted unless WaitPastTimeout.
	StepTimeout time.Duration
	// WaitPastTimeout keeps an overdue step waiting, saying so.
	WaitPastTimeout bool
}

// policyOf reads the approval policy with its defaults.
func policyOf(gg *gitopsv1alpha1.GitGate) Policy {
	a := gg.Spec.Approval
	p := Policy{ApproveLabel: a.Labels.Approve, PromoteFullLabel: a.Labels.PromoteFull, RollbackLabel: a.Labels.Rollback, RetryLabel: a.Labels.Retry,
		RejectLabel: a.Labels.Reject, AllowedUsers: a.AllowedUsers, AllowedCommitters: a.AllowedCommitters, AllowedTeams: a.AllowedTeams, AllowSelfApproval: a.AllowSelfApproval}
	if p.ApproveLabel == "" {
		p.ApproveLabel = "sluice/approve"
	}
	if p.PromoteFullLabel == "" {
		p.PromoteFullLabel = "sluice/promote-full"
	}
	if p.RollbackLabel == "" {
		p.RollbackLabel = "sluice/rollback"
	}
	if p.RetryLabel == "" {
		p.RetryLabel = "sluice/retry"
	}
	if p.RejectLabel == "" {
		p.RejectLabel = "sluice/reject"
	}
	if a.StepTimeout != nil {
		p.StepTimeout = a.StepTimeout.Duration
	}
	p.WaitPastTimeout = a.OnStepTimeout == gitopsv1alpha1.StepTimeoutWait
	p.MinPermission = scm.PermissionWrite
	if perm, err := scm.ParsePermission(a.MinPermission); err == nil && a.MinPermission != "" {
		p.MinPermission = perm
	}
	return p
}

// Names tells whether label is one of the policy's labels: only those are
// read, with their authors' permissions. A label the policy leaves unnamed
// ("") names nothing.
func (p Policy) Names(label string) bool {
	for _, name := range []string{p.ApproveLabel, p.PromoteFullLabel, p.RollbackLabel, p.RetryLabel, p.RejectLabel} {
		if name != "" && strings.EqualFold(name, label) {
			return true
		}
	}
	return false
}

// TeamsToAsk lists the allowed teams ("org/team-slug") whose membership of
// user decides whether a label of theirs counts, in the policy's order: none
// when no team is allowed, when user is one of the allowed users, or when
// their permission is below the minimum (the label is refused for that).
// An entry that names no organisation is not a team and is not asked.
func (p Policy) TeamsToAsk(user string, perm scm.Permission) []string {
	if len(p.AllowedTeams) == 0 || containsFold(p.AllowedUsers, user) || !perm.AtLeast(p.MinPermission) {
		return nil
	}
	var out []string
	for _, team := range p.AllowedTeams {
		if org, slug, ok := strings.Cut(team, "/"); ok && org != "" && slug != "" {
			out = append(out, team)
		}
	}
	return out
}

// refuseActor says why the author of label l may not act by the policy
// ("" when they may); what names the label in the message.
func (p Policy) refuseActor(l Label, what string) (reason, message string) {
	switch {
	case !l.Permission.AtLeast(p.MinPermission):
		return ReasonInsufficientPermission, fmt.Sprintf("%s: %s has %s permission, %s is needed", what, l.AddedBy, l.Permission, p.MinPermission)
	case len(p.AllowedTeams) > 0 && !containsFold(p.AllowedUsers, l.AddedBy) && len(l.Teams) == 0:
		if len(p.AllowedUsers) > 0 {
			return ReasonNotAllowed, what + ": not one of the allowed users nor a member of an allowed team"
		}
		return ReasonNotAllowed, what + ": not a member of an allowed team"
	case len(p.AllowedTeams) == 0 && len(p.AllowedUsers) > 0 && !containsFold(p.AllowedUsers, l.AddedBy):
		return ReasonNotAllowed, what + ": not one of the allowed users"
	}
	return "", ""
}

// refuseSelfApproval says why the label l, for action, may not be acted on
// when its author opened the pull request it is on, author ("" when it may).
// Only approving and promoting are another person's duty: stopping a
// release (rollback, or reject, which is a rollback) or trying it again
// (retry) is anyone's.
func (p Policy) refuseSelfApproval(l Label, action Action, author, what string) (reason, message string) {
	if p.AllowSelfApproval || author == "" || (action != ActionApprove && action != ActionPromoteFull) || !strings.EqualFold(l.AddedBy, author) {
		return "", ""
	}
	return ReasonSelfApproval, fmt.Sprintf("%s: %s opened the pull request, and its author cannot approve its release (someone else must, or set spec.approval.allowSelfApproval)", what, l.AddedBy)
}

// committerAllowed tells whether the author or signer of commit c may act
// through a trailer or a declarative approval.
func (p Policy) committerAllowed(c TrailerCommit) bool {
	return len(p.AllowedCommitters) == 0 || c.allowed(p.AllowedCommitters)
}

// allowed tells whether the commit's author or signer is in list.
func (c TrailerCommit) allowed(list []string) bool {
	if len(c.Identities) == 0 {
		return containsFold(list, c.Identity)
	}
	for _, id := range c.Identities {
		if containsFold(list, id) {
			return true
		}
	}
	return false
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// overdue tells, at now, whether the paused step of r has waited longer
// than the policy's StepTimeout for its approval, and when it will have
// (the zero time when no timeout applies).
func (p Policy) overdue(r RolloutView, now time.Time) (bool, time.Time) {
	if p.StepTimeout <= 0 || !r.InRelease || !r.Paused || r.PausedAt.IsZero() {
		return false, time.Time{}
	}
	deadline := r.PausedAt.Add(p.StepTimeout)
	return !now.Before(deadline), deadline
}
