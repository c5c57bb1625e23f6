package scm

import (
	"context"
	"time"
)

// CommentReader reads what people write in a pull request's conversation.
type CommentReader interface {
	// Comments lists the comments of a pull request's conversation, oldest first, each with its
	// author and when it was written and last edited (Comment's CreatedAt and UpdatedAt). Notes
	// the host writes itself (GitLab's system notes: "approved this merge request", "added 1
	// commit") and comments on lines of the diff are left out.
	Comments(ctx context.Context, number int) ([]Comment, error)
}

// ReviewReader reads the reviews of a pull request.
type ReviewReader interface {
	// Reviews lists the reviews of a pull request that approve it or request changes, oldest
	// first, each with its reviewer and when it was submitted; a review dismissed since is listed
	// with ReviewDismissed. Pending (draft) reviews are left out. On a host whose approvals carry
	// no review (GitLab), each approval standing now is one ReviewApproved, at the time it was
	// given.
	Reviews(ctx context.Context, number int) ([]Review, error)
}

// CommitAuthorReader tells who authored the commits a pull request brings, as the host's users.
type CommitAuthorReader interface {
	// PullRequestCommits lists the commits a pull request brings, oldest first, each with its
	// author's e-mail address and, where the host links that address to an account, the
	// account's login.
	PullRequestCommits(ctx context.Context, number int) ([]CommitAuthor, error)
}

// ReviewState is what a review says.
type ReviewState string

// The states of a review.
const (
	// ReviewApproved approves the pull request.
	ReviewApproved ReviewState = "approved"
	// ReviewChangesRequested asks for changes: it withdraws the reviewer's approval.
	ReviewChangesRequested ReviewState = "changes_requested"
	// ReviewDismissed is a review dismissed since (by a maintainer, or by a new push): it
	// approves nothing any more.
	ReviewDismissed ReviewState = "dismissed"
)

// Review is a review of a pull request.
type Review struct {
	// ID is the host's id of the review (0 where the host has none: a GitLab approval).
	ID int64
	// Author is the login of the reviewer.
	Author string
	// State is what the review says.
	State ReviewState
	// SubmittedAt is when it was submitted (zero when the host does not say).
	SubmittedAt time.Time
	// CommitID is the commit it reviewed ("" when the host does not say).
	CommitID string
}

// CommitAuthor is a commit of a pull request and who authored it.
type CommitAuthor struct {
	// SHA of the commit.
	SHA string
	// Login of the author's account on the host; "" when the host links the e-mail address to
	// none.
	Login string
	// Email is the author's e-mail address as the commit records it.
	Email string
	// Name is the author's name as the commit records it.
	Name string
}
