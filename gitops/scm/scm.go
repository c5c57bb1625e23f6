// Package scm holds the capabilities sluice's GitOps adapter needs from a source-code host
// (GitHub, GitHub Enterprise), one small ctx-first interface each, and the typed errors every
// implementation returns. An implementation is bound to one repository when it is built.
//
// The adapter treats the SCM as best-effort: a status that cannot be posted or a pull request
// that cannot be read never blocks or breaks a rollout. The errors say why (RateLimitError with
// when to try again, NotFoundError, UnauthorizedError) so callers can requeue at the right time.
package scm

import (
	"context"
	"time"
)

// Observer is told about every request an SCM client sends, for metrics
// (observability/metrics.Metrics implements it). Implementations must be
// safe for concurrent use and must not block.
type Observer interface {
	// Request counts one HTTP request: op names the operation (method and
	// route, e.g. "POST /repos/statuses/{sha}"), status its outcome (the
	// HTTP status code, or "error" when no response came).
	Request(op, status string)
	// RateLimit records the remaining request budget the SCM reported.
	RateLimit(remaining int)
}

// CommitStatusWriter reports a rollout's progress as a commit status.
type CommitStatusWriter interface {
	// SetStatus makes status the latest status of its context on the commit sha. It posts only
	// when that differs from what the commit shows (state, description or target URL): it
	// remembers what it posted and, for a (sha, context) it has not seen since it started, lists
	// the commit's statuses first. posted tells whether a status was created.
	SetStatus(ctx context.Context, sha string, status CommitStatus) (posted bool, err error)
}

// PullRequestReader reads the pull requests behind a commit and the labels on them.
type PullRequestReader interface {
	// PullRequestsForCommit lists the pull requests associated with the commit sha: the merged
	// one that introduced it to the default branch, or the open and merged ones that contain it.
	PullRequestsForCommit(ctx context.Context, sha string) ([]PullRequest, error)
	// PullRequest reads one pull request, with its merge commit.
	PullRequest(ctx context.Context, number int) (PullRequest, error)
	// Labels lists the labels currently on a pull request, each with who added it and when (the
	// latest time it was added, from the pull request's event history). A label whose history is
	// missing has an empty AddedBy.
	Labels(ctx context.Context, number int) ([]AppliedLabel, error)
}

// PermissionReader reads what a user may do in the repository.
type PermissionReader interface {
	// Permission returns the user's permission on the repository. A user the host does not know
	// is a NotFoundError.
	Permission(ctx context.Context, user string) (Permission, error)
}

// TeamReader reads who belongs to the host's teams.
type TeamReader interface {
	// TeamMember tells whether user is an active member of the team slug of the organisation
	// org (members of its child teams included, as GitHub counts them). A pending invitation,
	// a team the host does not know and a team the credentials cannot see are all false.
	TeamMember(ctx context.Context, org, slug, user string) (bool, error)
}

// RevertProposer opens a pull request that reverts a merge commit.
type RevertProposer interface {
	// ProposeRevert creates a branch from the base branch with one commit reverting the merge
	// commit, and opens a pull request of it into the base. Calling it again for the same branch
	// returns the pull request already open for it.
	ProposeRevert(ctx context.Context, req RevertRequest) (RevertProposal, error)
}

// CommitState is the state of a commit status.
type CommitState string

// The states of a commit status.
const (
	// StatePending is a status still in progress (a rollout between steps or paused).
	StatePending CommitState = "pending"
	// StateSuccess is a status that finished well (a rollout completed).
	StateSuccess CommitState = "success"
	// StateFailure is a status that finished badly (a rollout rolled back).
	StateFailure CommitState = "failure"
	// StateError is a status that could not be determined.
	StateError CommitState = "error"
)

// MaxDescriptionLength is the longest description GitHub accepts on a commit status.
const MaxDescriptionLength = 140

// CommitStatus is one status of a context on a commit.
type CommitStatus struct {
	// Context names the status, e.g. "sluice/<namespace>/<rollout>". Compared case-insensitively.
	Context string
	// State is pending, success, failure or error.
	State CommitState
	// Description is a short human text; longer ones are cut to MaxDescriptionLength characters.
	Description string
	// TargetURL links to details; may be empty.
	TargetURL string
}

// PullRequest is what the adapter needs to know about a pull request.
type PullRequest struct {
	// Number is the pull request's number in the repository.
	Number int
	// Title is the pull request's title.
	Title string
	// State is "open" or "closed".
	State string
	// Merged tells whether the pull request was merged.
	Merged bool
	// MergeCommitSHA is the commit the merge created on the base branch (empty if not merged).
	MergeCommitSHA string
	// HeadSHA is the commit at the head of the pull request's branch.
	HeadSHA string
	// HeadRef is the name of the pull request's branch.
	HeadRef string
	// BaseRef is the name of the branch the pull request merges into.
	BaseRef string
	// Author is the login of the user who opened it.
	Author string
	// URL is the pull request's web page.
	URL string
	// Labels are the names of the labels on the pull request, as the pull request reports them.
	Labels []string
}

// AppliedLabel is a label on a pull request with who added it and when.
type AppliedLabel struct {
	// Name is the label's name.
	Name string
	// AddedBy is the login of the user (or app, "name[bot]") who added it last.
	AddedBy string
	// AddedAt is when it was added last.
	AddedAt time.Time
}

// RevertRequest describes a revert pull request to open.
type RevertRequest struct {
	// MergeCommitSHA is the commit to revert: a merge commit (reverted against its first parent)
	// or a squashed or rebased commit with one parent.
	MergeCommitSHA string
	// Base is the branch to revert on and open the pull request into, e.g. "main".
	Base string
	// Branch is the new branch's name; defaults to "sluice/revert-<first 12 hex of the sha>".
	Branch string
	// Title is the pull request's title; defaults to `Revert "<first line of the commit message>"`.
	Title string
	// Body is the pull request's description; defaults to a line naming the reverted commit.
	Body string
	// Author signs the revert commit (name and email); defaults to the host's authenticated user.
	Author *Signature
}

// Signature names who made a commit and when.
type Signature struct {
	// Name of the author.
	Name string
	// Email of the author.
	Email string
	// When the commit was made; zero means now.
	When time.Time
}

// RevertProposal is the pull request ProposeRevert opened (or found open).
type RevertProposal struct {
	// Number is the pull request's number.
	Number int
	// URL is the pull request's web page.
	URL string
	// Branch is the branch holding the revert commit.
	Branch string
	// CommitSHA is the revert commit at the head of the branch.
	CommitSHA string
	// Existing tells that the pull request was already open and nothing was created.
	Existing bool
}
