package gitea

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// The conversation capabilities a Client implements.
var (
	_ scm.CommentReader      = (*Client)(nil)
	_ scm.ReviewReader       = (*Client)(nil)
	_ scm.CommitAuthorReader = (*Client)(nil)
)

// Comments implements scm.CommentReader with GET /repos/{owner}/{repo}/issues/{index}/comments:
// the plain comments of the pull request's conversation (Gitea leaves out its own timeline
// entries, and review comments on lines). Gitea answers with every comment at once: the
// endpoint has no pages.
func (c *Client) Comments(ctx context.Context, number int) ([]scm.Comment, error) {
	var list []*sdk.Comment
	resp, err := c.getJSON(ctx, c.repoPath()+"/issues/"+strconv.Itoa(number)+"/comments", nil, &list)
	if err != nil {
		return nil, c.mapError(err, resp, fmt.Sprintf("comments of pull request #%d", number))
	}
	out := make([]scm.Comment, 0, len(list))
	for _, cm := range list {
		if cm == nil || cm.Poster == nil {
			continue
		}
		out = append(out, commentOf(cm))
	}
	return out, nil
}

// Reviews implements scm.ReviewReader with GET /repos/{owner}/{repo}/pulls/{index}/reviews
// (every page): APPROVED and REQUEST_CHANGES reviews, a dismissed one (Gitea keeps its state and
// sets dismissed, as when a push dismisses stale approvals) as ReviewDismissed. Comments,
// pending reviews and review requests say nothing of approval. Gitea refuses approving or
// requesting changes on a closed or merged pull request.
func (c *Client) Reviews(ctx context.Context, number int) ([]scm.Review, error) {
	api := c.api(ctx)
	var out []scm.Review
	for page := 1; page <= maxPages; page++ {
		list, resp, err := api.ListPullReviews(c.owner, c.repo, int64(number), sdk.ListPullReviewsOptions{ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize}})
		if err != nil {
			return nil, c.mapError(err, resp, fmt.Sprintf("reviews of pull request #%d", number))
		}
		for _, rv := range list {
			if rv == nil || rv.Reviewer == nil {
				continue
			}
			var state scm.ReviewState
			switch rv.State {
			case sdk.ReviewStateApproved:
				state = scm.ReviewApproved
			case sdk.ReviewStateRequestChanges:
				state = scm.ReviewChangesRequested
			default:
				continue
			}
			if rv.Dismissed {
				state = scm.ReviewDismissed
			}
			out = append(out, scm.Review{ID: rv.ID, Author: rv.Reviewer.UserName, State: state, SubmittedAt: rv.Submitted, CommitID: rv.CommitID})
		}
		if len(list) < pageSize {
			break
		}
	}
	return out, nil
}

// PullRequestCommits implements scm.CommitAuthorReader with GET
// /repos/{owner}/{repo}/pulls/{index}/commits (every page, without the files and signature
// checks Gitea would otherwise compute for each): the author's account is the one Gitea links the
// commit's author e-mail to.
func (c *Client) PullRequestCommits(ctx context.Context, number int) ([]scm.CommitAuthor, error) {
	var out []scm.CommitAuthor
	path := c.repoPath() + "/pulls/" + strconv.Itoa(number) + "/commits"
	for page := 1; page <= maxPages; page++ {
		var list []*sdk.Commit
		query := url.Values{"page": {strconv.Itoa(page)}, "limit": {strconv.Itoa(pageSize)}, "files": {"false"}, "verification": {"false"}}
		resp, err := c.getJSON(ctx, path, query, &list)
		if err != nil {
			return nil, c.mapError(err, resp, fmt.Sprintf("commits of pull request #%d", number))
		}
		for _, cm := range list {
			if cm == nil || cm.CommitMeta == nil {
				continue
			}
			a := scm.CommitAuthor{SHA: cm.SHA}
			if cm.Author != nil {
				a.Login = cm.Author.UserName
			}
			if cm.RepoCommit != nil && cm.RepoCommit.Author != nil {
				a.Email, a.Name = cm.RepoCommit.Author.Email, cm.RepoCommit.Author.Name
			}
			out = append(out, a)
		}
		if len(list) < pageSize {
			break
		}
	}
	return out, nil
}
