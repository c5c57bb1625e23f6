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
	// MinApprovals is how many different people must approve a step (0
	// counts as 1).
	MinApprovals int32
	// ExpireAfter bounds the age of an approval when it is counted (0:
	// approvals do not expire).
	ExpireAfter time.Duration
	// Required are the required approver sets.
	Required []RequiredSet
	// Comments and Reviews: comment commands and review approvals are
	// read.
	Comments, Reviews bool
}

// RequiredSet is a set of people some of whom must approve the steps it
// applies to (spec.approval.requiredApprovers[]).
type RequiredSet struct {
	// Name names it in messages ("" for a description of its members).
	Name string
	// Steps it applies to (none: every step).
	Steps []int32
	// Users and Teams ("org/team") are its members; CodeOwners adds the
	// code owners of the workload's manifest path.
	Users, Teams []string
	CodeOwners   bool
	// Min is how many of its members must approve (0 counts as 1).
	Min int32
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
	p.MinApprovals = max(a.MinApprovals, 1)
	if a.ExpireAfter != nil {
		p.ExpireAfter = a.ExpireAfter.Duration
	}
	for _, r := range a.RequiredApprovers {
		p.Required = append(p.Required, RequiredSet{Name: r.Name, Steps: r.Steps, Users: r.Users, Teams: r.Teams, CodeOwners: r.CodeOwners, Min: max(r.MinApprovals, 1)})
	}
	p.Comments, p.Reviews = !a.DisableComments, !a.DisableReviews
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

// Actor is a user of the host who acted, with what the policy needs to
// know of them.
type Actor struct {
	// Login on the host.
	Login string
	// Permission on the repository.
	Permission scm.Permission
	// Teams are the allowed teams ("org/team-slug") Login is an active
	// member of; read only when the policy lists allowed teams.
	Teams []string
}

// refuseActor says why actor a may not act by the policy ("" when they
// may); what names the intent in the message.
func (p Policy) refuseActor(a Actor, what string) (reason, message string) {
	switch {
	case !a.Permission.AtLeast(p.MinPermission):
		return ReasonInsufficientPermission, fmt.Sprintf("%s: %s has %s permission, %s is needed", what, a.Login, a.Permission, p.MinPermission)
	case len(p.AllowedTeams) > 0 && !containsFold(p.AllowedUsers, a.Login) && len(a.Teams) == 0:
		if len(p.AllowedUsers) > 0 {
			return ReasonNotAllowed, what + ": not one of the allowed users nor a member of an allowed team"
		}
		return ReasonNotAllowed, what + ": not a member of an allowed team"
	case len(p.AllowedTeams) == 0 && len(p.AllowedUsers) > 0 && !containsFold(p.AllowedUsers, a.Login):
		return ReasonNotAllowed, what + ": not one of the allowed users"
	}
	return "", ""
}

// refuseSelfApproval says why an intent for action by someone who authored
// the release may not be acted on ("" when it may); authored says how they
// did ("opened pull request #42", "authored commit 1a2b3c4d5e6f"), "" when
// they did not. Only approving and promoting are another person's duty:
// stopping a release (rollback, or reject, which is a rollback) or trying
// it again (retry) is anyone's.
func (p Policy) refuseSelfApproval(by string, action Action, authored, what string) (reason, message string) {
	if p.AllowSelfApproval || authored == "" || (action != ActionApprove && action != ActionPromoteFull) {
		return "", ""
	}
	return ReasonSelfApproval, fmt.Sprintf("%s: %s %s, and an author cannot approve the release (someone else must, or set spec.approval.allowSelfApproval)", what, by, authored)
}

// quorum is how many different people must approve a step.
func (p Policy) quorum() int32 { return max(p.MinApprovals, 1) }

// requiredFor returns the required sets that apply to any of the steps
// from..to.
func (p Policy) requiredFor(from, to int32) []RequiredSet {
	var out []RequiredSet
	for _, r := range p.Required {
		if len(r.Steps) == 0 {
			out = append(out, r)
			continue
		}
		for _, st := range r.Steps {
			if st >= from && st <= to {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// RequiredTeams lists the teams whose membership decides which required
// sets an approver counts for: the sets' teams, and the code-owner teams
// owners names (CODEOWNERS "@org/team" owners without the "@").
func (p Policy) RequiredTeams(owners []string) []string {
	var out []string
	add := func(team string) {
		if org, slug, ok := strings.Cut(team, "/"); ok && org != "" && slug != "" && !containsFold(out, team) {
			out = append(out, team)
		}
	}
	codeOwners := false
	for _, r := range p.Required {
		for _, t := range r.Teams {
			add(t)
		}
		codeOwners = codeOwners || r.CodeOwners
	}
	if codeOwners {
		for _, o := range owners {
			add(o)
		}
	}
	return out
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
