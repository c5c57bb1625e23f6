package github

import (
	"context"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v56/github"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// The conversation capabilities a Client implements.
var (
	_ scm.CommentReader      = (*Client)(nil)
	_ scm.ReviewReader       = (*Client)(nil)
	_ scm.CommitAuthorReader = (*Client)(nil)
)

// Comments implements scm.CommentReader with the issue comments of the pull request (GET
// /repos/{owner}/{repo}/issues/{number}/comments, every page): the comments of its
// conversation, not the review comments on lines of the diff.
func (c *Client) Comments(ctx context.Context, number int) ([]scm.Comment, error) {
	return commentHost{c}.Comments(ctx, number)
}

// Reviews implements scm.ReviewReader with GET /repos/{owner}/{repo}/pulls/{number}/reviews
// (every page): APPROVED, CHANGES_REQUESTED and DISMISSED reviews; COMMENTED ones say nothing
// of approval (GitHub keeps an approval through a later comment) and PENDING ones are drafts.
func (c *Client) Reviews(ctx context.Context, number int) ([]scm.Review, error) {
	var out []scm.Review
	opts := &gh.ListOptions{PerPage: 100}
	for page := 0; page < maxPages; page++ {
		list, resp, err := c.gh.PullRequests.ListReviews(ctx, c.owner, c.repo, number, opts)
		if err != nil {
			return nil, mapError(err, resp, fmt.Sprintf("reviews of pull request #%d", number), c.now())
		}
		for _, rv := range list {
			var state scm.ReviewState
			switch strings.ToUpper(rv.GetState()) {
			case "APPROVED":
				state = scm.ReviewApproved
			case "CHANGES_REQUESTED":
				state = scm.ReviewChangesRequested
			case "DISMISSED":
				state = scm.ReviewDismissed
			default:
				continue
			}
			out = append(out, scm.Review{ID: rv.GetID(), Author: rv.GetUser().GetLogin(), State: state,
				SubmittedAt: rv.GetSubmittedAt().Time, CommitID: rv.GetCommitID()})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// PullRequestCommits implements scm.CommitAuthorReader with GET
// /repos/{owner}/{repo}/pulls/{number}/commits (every page; GitHub lists at most 250): the
// author's account is the one GitHub links the commit's author e-mail to.
func (c *Client) PullRequestCommits(ctx context.Context, number int) ([]scm.CommitAuthor, error) {
	var out []scm.CommitAuthor
	opts := &gh.ListOptions{PerPage: 100}
	for page := 0; page < maxPages; page++ {
		list, resp, err := c.gh.PullRequests.ListCommits(ctx, c.owner, c.repo, number, opts)
		if err != nil {
			return nil, mapError(err, resp, fmt.Sprintf("commits of pull request #%d", number), c.now())
		}
		for _, cm := range list {
			out = append(out, scm.CommitAuthor{SHA: cm.GetSHA(), Login: cm.GetAuthor().GetLogin(),
				Email: cm.GetCommit().GetAuthor().GetEmail(), Name: cm.GetCommit().GetAuthor().GetName()})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}
