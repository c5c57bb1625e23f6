package gitea

import (
	"context"
	"fmt"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/sluice-dev/sluice/gitops/scm"
)

var _ scm.CommentWriter = (*Client)(nil)

// UpsertComment implements scm.CommentWriter with scm.StickyComments: a pull request's
// comments are its issue's comments, and sluice's own are those of the token's user.
func (c *Client) UpsertComment(ctx context.Context, number int, key, body string) (bool, error) {
	return c.comments.Upsert(ctx, commentHost{c}, number, key, body)
}

// commentHost is the Client as scm.StickyComments uses it.
type commentHost struct{ c *Client }

var _ scm.CommentHost = commentHost{}

// Self implements scm.CommentHost: the token's user (GET /user).
func (h commentHost) Self(ctx context.Context) (string, error) {
	u, resp, err := h.c.api(ctx).GetMyUserInfo()
	if err != nil {
		return "", h.c.mapError(err, resp, "the authenticated user")
	}
	return u.UserName, nil
}

// Comments implements scm.CommentHost with the Client's Comments (Gitea answers every comment
// at once: the endpoint has no pages).
func (h commentHost) Comments(ctx context.Context, number int) ([]scm.Comment, error) {
	return h.c.Comments(ctx, number)
}

// CreateComment implements scm.CommentHost.
func (h commentHost) CreateComment(ctx context.Context, number int, body string) (scm.Comment, error) {
	c := h.c
	cm, resp, err := c.api(ctx).CreateIssueComment(c.owner, c.repo, int64(number), sdk.CreateIssueCommentOption{Body: body})
	if err != nil {
		return scm.Comment{}, c.mapError(err, resp, fmt.Sprintf("commenting on pull request #%d", number))
	}
	return commentOf(cm), nil
}

// EditComment implements scm.CommentHost.
func (h commentHost) EditComment(ctx context.Context, number int, id int64, body string) (scm.Comment, error) {
	c := h.c
	cm, resp, err := c.api(ctx).EditIssueComment(c.owner, c.repo, id, sdk.EditIssueCommentOption{Body: body})
	if err != nil {
		return scm.Comment{}, c.mapError(err, resp, fmt.Sprintf("editing comment %d of pull request #%d", id, number))
	}
	return commentOf(cm), nil
}

func commentOf(cm *sdk.Comment) scm.Comment {
	out := scm.Comment{ID: cm.ID, Body: cm.Body, CreatedAt: cm.Created, UpdatedAt: cm.Updated}
	if cm.Poster != nil {
		out.Author = cm.Poster.UserName
	}
	return out
}
