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
	// Aborted is set while the release is aborted (held on the stable
	// revision), or rolling back after it.
	Aborted *AbortView
	// RetriedAt is when the Rollout's sluice.dev/retry was last written
	// (zero: never).
	RetriedAt time.Time
	// Analysis is what the MetricGates say about the current step (the
	// message of the Rollout's Analysis condition, e.g. "analysis 3/5
	// passed (error-rate 0.004)"); empty when no gate analyses it.
	Analysis string
	// AnalysisRunning: the step waits for its analysis.
	AnalysisRunning bool
}

// AbortView is what the decision needs of an aborted release.
type AbortView struct {
	// Step it was aborted at, and who aborted it how and when.
	Step    int32
	By, Via string
	At      time.Time
	// Held is true once every pod and all traffic are on stable.
	Held bool
	// Reason says why, e.g. the failed metric and its value of an abort
	// via analysis.
	Reason string
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
	// PullRequest is the number of the pull request the label is on (0:
	// the release's, Observation.PullRequest).
	PullRequest int
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

// Observation is what the gate knows of one bound Rollout.
type Observation struct {
	// Rollout is the Rollout's state.
	Rollout RolloutView
	// Revision is the commit the workload is released from.
	Revision string
	// Commits are the release's other commits: those the sync of Revision
	// brought that changed the workload's path, oldest first. They show
	// the same commit status as Revision, a trailer naming any of them
	// names the release, and a revert of any of them reverts it.
	Commits []string
	// PullRequest is the number of the pull request that brought Revision,
	// else the newest of the release's commits (0: none).
	PullRequest int
	// Labels on that pull request that name sluice actions.
	Labels []Label
	// Authors are the logins of who opened the release's pull requests, by
	// number.
	Authors map[int]string
	// Trailers are the commits after Revision with directives for the
	// Rollout, oldest first.
	Trailers []TrailerCommit
	// Presses are the verified presses of the buttons of the Rollout's
	// check run on the release's commits, not applied yet (presses.go).
	Presses []ButtonPress
	// Declared is the Rollout's sluice.dev/approve annotation when it
	// names a commit, as applied from Git (nil: none).
	Declared *DeclaredApproval
	// RevertedBy is the first commit after Revision that reverts it ("":
	// none).
	RevertedBy string
	// Applied are the intents already applied to the release of Revision.
	Applied []Applied
	// Policy is the approval policy.
	Policy Policy
	// Now is when the observation was made.
	Now time.Time
	// Host is the SCM host the labels are read on ("" without one).
	Host scm.Host
	// Tracked: a status was posted on Revision before, so its release was
	// seen; a Rollout found healthy reports success only on a tracked
	// revision (not on every commit the GitOps tool applies).
	Tracked bool
	// LastPosted is the state of the status last posted on Revision (""
	// when not Tracked).
	LastPosted scm.CommitState
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
	// At is when it was given.
	At time.Time
	// Key identifies the source: the commit SHA of a trailer or revert, the
	// label name and the time it was added.
	Key string
	// Rejected marks a Rollback that rejected the commit (the reject
	// label).
	Rejected bool
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
	// Commit is the Git commit the intent came from (a revert, a trailer's
	// commit); empty for a label.
	Commit string
	// PullRequest is the pull request a label intent came from.
	PullRequest int
	// Rejected marks a Rollback that rejects the commit (the reject
	// label): its reason, event, record and commit status say "rejected"
	// rather than "rolled back".
	Rejected bool
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
	// WakeAt is when the decision changes by time alone (a step's approval
	// timeout); zero when it does not.
	WakeAt time.Time
}

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
		d.Apply, d.Rejections = o.fromLabels()
		if d.Apply == nil {
			var more []Rejection
			d.Apply, more = o.fromPresses()
			d.Rejections = append(d.Rejections, more...)
		}
		if d.Apply == nil {
			var more []Rejection
			d.Apply, more = o.fromTrailers()
			d.Rejections = append(d.Rejections, more...)
		}
		in, more := o.fromDeclared()
		d.Rejections = append(d.Rejections, more...)
		if d.Apply == nil {
			d.Apply = in
		}
		if d.Apply == nil {
			d.Apply, d.WakeAt = o.fromTimeout()
		}
	}
	d.Posts, d.Message = o.statuses(d.Apply)
	if !d.WakeAt.IsZero() || d.Apply != nil {
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
// label) and refuses the others that would apply to its revision.
func (o Observation) whileAborted() (*Intent, []Rejection) {
	var rejections []Rejection
	p := o.Policy
	var retry *Intent
	for _, l := range o.Labels {
		if o.applied(o.labelKey(l)) {
			continue
		}
		switch {
		case p.RetryLabel != "" && strings.EqualFold(l.Name, p.RetryLabel):
			if reason, msg := o.refuseLabel(l, ActionRetry); reason != "" {
				rejections = append(rejections, Rejection{Reason: reason, Message: msg})
				continue
			}
			if retry == nil {
				retry = &Intent{Action: ActionRetry, By: l.AddedBy, Via: o.labelVia(), At: l.AddedAt, Key: o.labelKey(l), PullRequest: o.prOf(l)}
			}
		case strings.EqualFold(l.Name, p.ApproveLabel) || strings.EqualFold(l.Name, p.PromoteFullLabel):
			rejections = append(rejections, Rejection{Reason: ReasonRolledBack,
				Message: fmt.Sprintf("label %s on pull request #%d added by %s: %s", l.Name, o.prOf(l), l.AddedBy, o.abortedAdvice())})
		}
	}
	for _, c := range o.Trailers {
		if o.applied("commit:" + c.SHA) {
			continue
		}
		for _, dir := range c.Directives {
			if dir.Action == git.ActionRollback || dir.Revision != "" && !o.namesRevision(dir.Revision) {
				continue
			}
			rejections = append(rejections, Rejection{Reason: ReasonRolledBack,
				Message: fmt.Sprintf("trailer %q in commit %s: %s", dir.String(), short(c.SHA), o.abortedAdvice())})
		}
	}
	return retry, append(rejections, o.declaredWhileAborted()...)
}

func (o Observation) applied(key string) bool {
	for _, a := range o.Applied {
		if a.Key == key {
			return true
		}
	}
	return false
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
	case !o.Policy.committerAllowed(c):
		return nil, ReasonNotAllowed, what + ": " + c.Identity + " is not one of the allowed committers"
	case dir.Revision != "" && !o.namesRevision(dir.Revision):
		return nil, ReasonOtherRevision, fmt.Sprintf("%s: names revision %s, the release is of %s (%s)", what, dir.Revision, short(o.Revision), r.CanaryRevision)
	}
	in := &Intent{By: c.Identity, Via: ViaTrailer, At: c.When, Key: "commit:" + c.SHA, Commit: c.SHA}
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
