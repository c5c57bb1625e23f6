package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v56/github"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// maxCommentPages bounds the listing of a pull request's comments (100 a page).
const maxCommentPages = 30

var _ scm.CommentWriter = (*Client)(nil)

// UpsertComment implements scm.CommentWriter with scm.StickyComments: the pull request's
// comments are its issue's comments, and sluice's own are those of the token's user (a GitHub
// App's are those of its bot, "<slug>[bot]").
func (c *Client) UpsertComment(ctx context.Context, number int, key, body string) (bool, error) {
	return c.comments.Upsert(ctx, commentHost{c}, number, key, body)
}

// commentHost is the Client as scm.StickyComments uses it.
type commentHost struct{ c *Client }

var _ scm.CommentHost = commentHost{}

// Self implements scm.CommentHost: the login of the token's user (GET /user), or, for a GitHub
// App, its bot's login, "<slug>[bot]" (GET /app, with the App's JWT: an installation token
// cannot read /user).
func (h commentHost) Self(ctx context.Context) (string, error) {
	c := h.c
	if c.appAPI != nil {
		app, resp, err := c.appAPI.Apps.Get(ctx, "")
		if err != nil {
			return "", mapError(err, resp, "the authenticated app", c.now())
		}
		if app.GetSlug() == "" {
			return "", fmt.Errorf("the authenticated app has no slug")
		}
		return app.GetSlug() + "[bot]", nil
	}
	user, resp, err := c.gh.Users.Get(ctx, "")
	if err != nil {
		return "", mapError(err, resp, "the authenticated user", c.now())
	}
	return user.GetLogin(), nil
}

// Comments implements scm.CommentHost.
func (h commentHost) Comments(ctx context.Context, number int) ([]scm.Comment, error) {
	c := h.c
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	var out []scm.Comment
	for page := 0; page < maxCommentPages; page++ {
		list, resp, err := c.gh.Issues.ListComments(ctx, c.owner, c.repo, number, opts)
		if err != nil {
			return nil, mapError(err, resp, fmt.Sprintf("the comments of pull request #%d", number), c.now())
		}
		for _, ic := range list {
			out = append(out, commentOf(ic))
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// CreateComment implements scm.CommentHost.
func (h commentHost) CreateComment(ctx context.Context, number int, body string) (scm.Comment, error) {
	c := h.c
	ic, resp, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, number, &gh.IssueComment{Body: gh.String(body)})
	if err != nil {
		return scm.Comment{}, mapError(err, resp, fmt.Sprintf("commenting on pull request #%d", number), c.now())
	}
	return commentOf(ic), nil
}

// EditComment implements scm.CommentHost.
func (h commentHost) EditComment(ctx context.Context, number int, id int64, body string) (scm.Comment, error) {
	c := h.c
	ic, resp, err := c.gh.Issues.EditComment(ctx, c.owner, c.repo, id, &gh.IssueComment{Body: gh.String(body)})
	if err != nil {
		return scm.Comment{}, mapError(err, resp, fmt.Sprintf("editing comment %d of pull request #%d", id, number), c.now())
	}
	return commentOf(ic), nil
}

func commentOf(ic *gh.IssueComment) scm.Comment {
	return scm.Comment{ID: ic.GetID(), Author: ic.GetUser().GetLogin(), Body: ic.GetBody(), CreatedAt: ic.GetCreatedAt().Time, UpdatedAt: ic.GetUpdatedAt().Time}
}
