package gitops

import (
	"fmt"
	"strings"
	"time"

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
	// ActionRollback rolls the release back to the stable revision at once.
	ActionRollback Action = "Rollback"
)

// The ways an intent reaches sluice, as recorded in approvals.
const (
	// ViaLabel is a pull-request label.
	ViaLabel = "github-label"
	// ViaTrailer is a commit trailer.
	ViaTrailer = "git-trailer"
	// ViaRevert is a commit reverting the revision.
	ViaRevert = "git-revert"
)

// Reasons of the events a rejected intent raises.
const (
	// ReasonInsufficientPermission: the label's author lacks the permission.
	ReasonInsufficientPermission = "InsufficientPermission"
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
)

// RolloutView is what the decision needs of a bound Rollout.
type RolloutView struct {
	// Namespace and Name of the Rollout.
	Namespace, Name string
	// InRelease: a release is in progress and its steps are not all done.
	InRelease bool
	// Healthy: no release in progress.
	Healthy bool
	// Step is the current step (from 1) and Steps how many there are.
	Step, Steps int32
	// Paused: the current step waits for an approval.
	Paused bool
	// PausedAt is when the current step state was entered.
	PausedAt time.Time
	// CanaryRevision is the revision being released; StableRevision the one
	// replaced.
	CanaryRevision, StableRevision string
}

// Label is a pull-request label with who added it, when, and their
// permission on the repository.
type Label struct {
	scm.AppliedLabel
	// Permission of AddedBy on the repository.
	Permission scm.Permission
	// Teams are the allowed teams ("org/team-slug") AddedBy is an active
	// member of; read only when the policy lists allowed teams.
	Teams []string
}

// TrailerCommit is a commit on the branch after the revision, with its sluice
// directives and who is vouched for it.
type TrailerCommit struct {
	// SHA of the commit.
	SHA string
	// Directives are the trailers naming this Rollout.
	Directives []git.Directive
	// Identity is the signer's identity when a keyring is configured and
	// the signature verified, else the author's e-mail address.
	Identity string
	// Identities are every identity the signer's key names (e-mail
	// addresses of OpenPGP user IDs, allowed-signers principals); empty
	// without a keyring.
	Identities []string
	// Unverified says why the signature did not verify (keyring
	// configured only).
	Unverified string
	// When the commit was made.
	When time.Time
}

// Policy is the approval policy, defaults applied.
type Policy struct {
	// ApproveLabel, PromoteFullLabel and RollbackLabel name the labels.
	ApproveLabel, PromoteFullLabel, RollbackLabel string
	// MinPermission for labels.
	MinPermission scm.Permission
	// AllowedUsers and AllowedCommitters restrict who may act (empty: anyone
	// with the permission, or any committer).
	AllowedUsers, AllowedCommitters []string
	// AllowedTeams ("org/team-slug") admit their members' labels too: with
	// AllowedUsers, a label's author must be one of the users or a member
	// of one of the teams.
	AllowedTeams []string
}

// Observation is what the gate knows of one bound Rollout.
type Observation struct {
	// Rollout is the Rollout's state.
	Rollout RolloutView
	// Revision is the commit the workload is released from.
	Revision string
	// PullRequest is the number of the pull request that brought Revision
	// (0: none).
	PullRequest int
	// Labels on that pull request that name sluice actions.
	Labels []Label
	// Trailers are the commits after Revision with directives for the
	// Rollout, oldest first.
	Trailers []TrailerCommit
	// RevertedBy is the first commit after Revision that reverts it ("":
	// none).
	RevertedBy string
	// Applied are the intents already applied to the release of Revision.
	Applied []Applied
	// Policy is the approval policy.
	Policy Policy
	// Tracked: a status was posted on Revision before, so its release was
	// seen; a Rollout found healthy reports success only on a tracked
	// revision (not on every commit the GitOps tool applies).
	Tracked bool
	// Context and TargetURL of the Rollout's commit status.
	Context, TargetURL string
}

// Applied is an intent already applied.
type Applied struct {
	// Action applied.
	Action Action
	// Step approved up to.
	Step int32
	// By and Via as recorded.
	By, Via string
	// Key identifies the source: the commit SHA of a trailer or revert, the
	// label name and the time it was added.
	Key string
}

// Intent is an action to apply.
type Intent struct {
	// Action to apply.
	Action Action
	// Step approved up to (Approve and PromoteFull).
	Step int32
	// By is who asked, Via how.
	By, Via string
	// At is when they asked.
	At time.Time
	// Key identifies the source, see Applied.Key.
	Key string
}

// Rejection is an intent that applies to nothing, and why.
type Rejection struct {
	// Reason is the event reason.
	Reason string
	// Message names the intent and the reason.
	Message string
}

// Post is a commit status to post.
type Post struct {
	// SHA of the commit.
	SHA string
	// Status to post.
	Status scm.CommitStatus
}

// Decision is what the gate does for one Rollout.
type Decision struct {
	// Apply is the intent to apply now (nil: none).
	Apply *Intent
	// Rejections are the intents that apply to nothing.
	Rejections []Rejection
	// Posts are the commit statuses the commits should show.
	Posts []Post
	// Message says what the Rollout waits for.
	Message string
}

// Decide computes what to do for one bound Rollout. It is pure: the same
// observation gives the same decision.
func Decide(o Observation) Decision {
	var d Decision
	rolledBack := o.rolledBack()
	if rolledBack == nil && o.RevertedBy != "" && !o.Rollout.InRelease {
		// Git says so, whatever was recorded.
		rolledBack = &Applied{Action: ActionRollback, By: o.RevertedBy, Via: ViaRevert, Key: o.RevertedBy}
	}
	switch {
	case rolledBack != nil:
	case o.RevertedBy != "" && o.Rollout.InRelease:
		d.Apply = &Intent{Action: ActionRollback, By: o.RevertedBy, Via: ViaRevert, Key: o.RevertedBy}
	default:
		d.Apply, d.Rejections = o.fromLabels()
		if d.Apply == nil {
			var more []Rejection
			d.Apply, more = o.fromTrailers()
			d.Rejections = append(d.Rejections, more...)
		}
	}
	if d.Apply != nil && d.Apply.Action == ActionRollback {
		rolledBack = &Applied{Action: ActionRollback, By: d.Apply.By, Via: d.Apply.Via, Key: d.Apply.Key}
	}
	d.Posts, d.Message = o.statuses(rolledBack, d.Apply)
	return d
}

// rolledBack returns the rollback applied to the release, if any.
func (o Observation) rolledBack() *Applied {
	for i := range o.Applied {
		if o.Applied[i].Action == ActionRollback {
			return &o.Applied[i]
		}
	}
	return nil
}

func (o Observation) applied(key string) bool {
	for _, a := range o.Applied {
		if a.Key == key {
			return true
		}
	}
	return false
}

func labelKey(l Label) string {
	return "label:" + l.Name + "@" + l.AddedAt.UTC().Format(time.RFC3339)
}

// fromLabels finds the label intent to apply: a rollback label first, then
// promote-full, then approve.
func (o Observation) fromLabels() (*Intent, []Rejection) {
	var rejections []Rejection
	p := o.Policy
	for _, want := range []struct {
		name   string
		action Action
	}{{p.RollbackLabel, ActionRollback}, {p.PromoteFullLabel, ActionPromoteFull}, {p.ApproveLabel, ActionApprove}} {
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
			if o.applied(labelKey(l)) {
				continue // applied; the Rollout has not moved on yet
			}
			in := &Intent{Action: want.action, By: l.AddedBy, Via: ViaLabel, At: l.AddedAt, Key: labelKey(l)}
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
	what := fmt.Sprintf("label %s on pull request #%d", l.Name, o.PullRequest)
	if l.AddedBy != "" {
		what += " added by " + l.AddedBy
	}
	switch {
	case !o.Rollout.InRelease:
		return ReasonNotPaused, what + ": no release in progress"
	case action == ActionApprove && !o.Rollout.Paused:
		return ReasonNotPaused, what + ": the step is not paused"
	case l.AddedBy == "":
		return ReasonUnknownActor, what + ": GitHub does not say who added it; remove it and add it again"
	case !l.Permission.AtLeast(o.Policy.MinPermission):
		return ReasonInsufficientPermission, fmt.Sprintf("%s: %s has %s permission, %s is needed", what, l.AddedBy, l.Permission, o.Policy.MinPermission)
	case len(o.Policy.AllowedTeams) > 0 && !containsFold(o.Policy.AllowedUsers, l.AddedBy) && len(l.Teams) == 0:
		if len(o.Policy.AllowedUsers) > 0 {
			return ReasonNotAllowed, what + ": not one of the allowed users nor a member of an allowed team"
		}
		return ReasonNotAllowed, what + ": not a member of an allowed team"
	case len(o.Policy.AllowedTeams) == 0 && len(o.Policy.AllowedUsers) > 0 && !containsFold(o.Policy.AllowedUsers, l.AddedBy):
		return ReasonNotAllowed, what + ": not one of the allowed users"
	case action != ActionRollback && !l.AddedAt.After(o.Rollout.PausedAt):
		// Both times have whole seconds: a label of the same second as the
		// pause may be older than it, and counts for nothing.
		return ReasonLabelPredatesPause, fmt.Sprintf("%s: added at %s, before step %d/%d paused at %s; remove it and add it again to approve",
			what, l.AddedAt.UTC().Format(time.RFC3339), o.Rollout.Step, o.Rollout.Steps, o.Rollout.PausedAt.UTC().Format(time.RFC3339))
	}
	return "", ""
}

// fromTrailers finds the trailer intent to apply: the newest directive that
// applies, rollback first.
func (o Observation) fromTrailers() (*Intent, []Rejection) {
	var (
		rejections []Rejection
		best       *Intent
	)
	for _, c := range o.Trailers {
		if o.applied("commit:" + c.SHA) {
			continue
		}
		for _, dir := range c.Directives {
			in, reason, msg := o.trailerIntent(c, dir)
			if reason != "" {
				rejections = append(rejections, Rejection{Reason: reason, Message: msg})
				continue
			}
			if in == nil {
				continue
			}
			if best == nil || in.Action == ActionRollback || best.Action != ActionRollback && in.Step > best.Step {
				best = in
			}
		}
	}
	return best, rejections
}

func (o Observation) trailerIntent(c TrailerCommit, dir git.Directive) (*Intent, string, string) {
	what := fmt.Sprintf("trailer %q in commit %s", dir.String(), short(c.SHA))
	r := o.Rollout
	switch {
	case !r.InRelease:
		return nil, "", "" // for a later release of this revision, or none
	case c.Unverified != "":
		return nil, ReasonUnverifiedCommit, what + ": " + c.Unverified
	case len(o.Policy.AllowedCommitters) > 0 && !c.allowed(o.Policy.AllowedCommitters):
		return nil, ReasonNotAllowed, what + ": " + c.Identity + " is not one of the allowed committers"
	case dir.Revision != "" && !o.namesRevision(dir.Revision):
		return nil, ReasonOtherRevision, fmt.Sprintf("%s: names revision %s, the release is of %s (%s)", what, dir.Revision, short(o.Revision), r.CanaryRevision)
	}
	in := &Intent{By: c.Identity, Via: ViaTrailer, At: c.When, Key: "commit:" + c.SHA}
	switch dir.Action {
	case git.ActionRollback:
		in.Action = ActionRollback
	case git.ActionPromoteFull:
		in.Action, in.Step = ActionPromoteFull, r.Steps
	case git.ActionApprove:
		if dir.Step < r.Step || dir.Step == r.Step && !r.Paused {
			return nil, ReasonOlderStep, fmt.Sprintf("%s: step %d is passed, the release is at step %d/%d", what, dir.Step, r.Step, r.Steps)
		}
		in.Action, in.Step = ActionApprove, min(dir.Step, r.Steps)
	default:
		return nil, "", ""
	}
	return in, "", ""
}

// namesRevision tells whether rev names the release: a prefix (7+ hex) of
// the commit, or the canary revision.
func (o Observation) namesRevision(rev string) bool {
	rev = strings.ToLower(rev)
	if rev == strings.ToLower(o.Rollout.CanaryRevision) {
		return true
	}
	return len(rev) >= 7 && strings.HasPrefix(o.Revision, rev)
}

// statuses computes the commit statuses for the revision (and the revert
// commit), and the message.
func (o Observation) statuses(rolledBack *Applied, apply *Intent) ([]Post, string) {
	if o.Revision == "" {
		return nil, "no revision found"
	}
	r := o.Rollout
	st := scm.CommitStatus{Context: o.Context, TargetURL: o.TargetURL}
	var posts []Post
	switch {
	case rolledBack != nil:
		st.State, st.Description = scm.StateFailure, "rolled back by "+rolledBack.By
		if rolledBack.Via == ViaRevert {
			st.Description = "rolled back by " + short(rolledBack.By)
			rb := scm.CommitStatus{Context: o.Context, TargetURL: o.TargetURL, State: scm.StatePending, Description: "rolling back " + short(o.Revision) + " to the stable revision"}
			if r.Healthy {
				rb.State, rb.Description = scm.StateSuccess, "rolled back "+short(o.Revision)+": stable revision restored"
			}
			posts = append(posts, Post{SHA: rolledBack.By, Status: rb})
		}
	case r.Healthy && !o.Tracked:
		return posts, "no release in progress"
	case r.Healthy:
		st.State, st.Description = scm.StateSuccess, "released"
		if r.Steps > 0 {
			st.Description = fmt.Sprintf("released: %d/%d steps done", r.Steps, r.Steps)
		}
	case r.InRelease && r.Paused && o.approvedBy(apply) != "":
		st.State = scm.StatePending
		st.Description = fmt.Sprintf("step %d/%d approved by %s", r.Step, r.Steps, o.approvedBy(apply))
	case r.InRelease && r.Paused:
		st.State = scm.StatePending
		st.Description = fmt.Sprintf("step %d/%d paused: add label %s to continue", r.Step, r.Steps, o.Policy.ApproveLabel)
	case r.InRelease:
		st.State = scm.StatePending
		st.Description = fmt.Sprintf("step %d/%d in progress", r.Step, r.Steps)
	default:
		st.State, st.Description = scm.StatePending, "release finishing"
	}
	posts = append([]Post{{SHA: o.Revision, Status: st}}, posts...)
	return posts, st.Description
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// approvedBy names who approved the current step, by the intent being
// applied or one applied before that the Rollout has not acted on yet; ""
// when nobody did.
func (o Observation) approvedBy(apply *Intent) string {
	if apply != nil && apply.Action != ActionRollback && apply.Step >= o.Rollout.Step {
		return apply.By
	}
	for i := len(o.Applied) - 1; i >= 0; i-- {
		if a := o.Applied[i]; a.Action != ActionRollback && a.Step >= o.Rollout.Step {
			return a.By
		}
	}
	return ""
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
