package gitops

import (
	"time"

	"github.com/sluice-dev/sluice/gitops/command"
	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// The observation of one bound Rollout and the decision taken on it: the
// types Decide reads and returns.

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
	// StartedAt is when the release (or the abort) began: the Rollout's
	// Progressing condition last turned true. A comment command to stop a
	// release counts only when written since.
	StartedAt time.Time
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

// actor is who added the label, for the policy.
func (l Label) actor() Actor {
	return Actor{Login: l.AddedBy, Permission: l.Permission, Teams: l.Teams}
}

// CommentCommand is a sluice command (or a malformed command line) in a
// comment of one of the release's pull requests.
type CommentCommand struct {
	// Command is the command ("" Verb for a malformed line).
	command.Command
	// Problem says why a line that starts like a command is not one, and
	// Text is that line ("" for a command).
	Problem, Text string
	// Comment is the comment's id on the host.
	Comment int64
	// Actor wrote the comment.
	Actor
	// At is when the comment was written, or last edited: an edited
	// comment counts from its edit.
	At time.Time
	// Edited: the comment was edited after it was written.
	Edited bool
	// PullRequest is the pull request the comment is on.
	PullRequest int
}

// ReviewVote is what a reviewer's latest review of one of the release's
// pull requests says: an approval standing since SubmittedAt, or (changes
// requested) a withdrawal of their approvals given before it.
type ReviewVote struct {
	scm.Review
	// Actor reviewed.
	Actor
	// PullRequest is the pull request reviewed.
	PullRequest int
}

// CodeOwners are the owners CODEOWNERS gives the workload's manifest path.
type CodeOwners struct {
	// File is the CODEOWNERS file read ("" when the branch has none).
	File string
	// Path is the manifest path ("" for the repository's root).
	Path string
	// Owners are the owners as written ("@user", "@org/team", e-mails);
	// empty when no rule gives the path any.
	Owners []string
	// Problem says why the owners are not known ("" when they are).
	Problem string
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
	// CommitAuthors are who authored the release's commits: from the
	// host, the commits of its pull requests (with the account the host
	// links each e-mail to); from Git, the release's commits and the
	// commits its merges brought (e-mails only).
	CommitAuthors []scm.CommitAuthor
	// HostAuthorsUnread and GitAuthorsUnread say why the authors of the
	// release's commits are not all known, from the host and from Git (""
	// when they are): until they are, nobody counts as someone else than
	// an author.
	HostAuthorsUnread, GitAuthorsUnread string
	// Comments are the sluice command lines in the comments of the
	// release's pull requests, oldest first (empty unless the policy reads
	// comments).
	Comments []CommentCommand
	// Reviews are each reviewer's latest word on the release's pull
	// requests (empty unless the policy reads reviews).
	Reviews []ReviewVote
	// Members maps a login (lower case) to the teams of the required
	// approver sets (and the code-owner teams) it is an active member of.
	Members map[string][]string
	// CodeOwners are the code owners of the workload's manifest path (read
	// only when a required set names them).
	CodeOwners CodeOwners
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
	// label name and the time it was added; for an approval, the step and
	// when it paused.
	Key string
	// Rejected marks a Rollback that rejected the commit (the reject
	// label).
	Rejected bool
	// Keys identify the sources of an approval's individual approvals, so
	// that none is counted again.
	Keys []string
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
	// Approvers are the individual approvals of an Approve or PromoteFull,
	// one per person, oldest first.
	Approvers []Approver
}

// Approver is one person's approval that counted toward a quorum.
type Approver struct {
	// Action is ActionApprove or ActionPromoteFull.
	Action Action
	// By is who approved, Via how, At when.
	By, Via string
	At      time.Time
	// Commit is the Git commit it came from ("" for none).
	Commit string
	// PullRequest is the pull request it was given on (0: none).
	PullRequest int
	// Keys identify its sources.
	Keys []string
	// Required names the required sets it counts for.
	Required []string
}

// Rejection is an intent that applies to nothing, and why.
type Rejection struct {
	// Reason is the event reason.
	Reason string
	// Message names the intent and the reason.
	Message string
	// By, Via, At, Commit and PullRequest say who asked, how, when, from
	// which commit and on which pull request, where known.
	By, Via     string
	At          time.Time
	Commit      string
	PullRequest int
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
	// timeout, an approval expiring); zero when it does not.
	WakeAt time.Time
	// Quorum is where the approval of the step the release waits at
	// stands (nil while it waits for none).
	Quorum *Quorum
}

// Quorum is where the approval of one step stands.
type Quorum struct {
	// Step the approvals are for; Needed how many people must approve.
	Step, Needed int32
	// Approvers are those who count so far, oldest first.
	Approvers []Approver
	// Waiting says what is still missing ("1 more", "an approval
	// by security (alice, acme/sre)"); empty once it is met.
	Waiting []string
}
