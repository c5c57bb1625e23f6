package gitlab

import (
	"context"
	"fmt"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/gitops/scm"
)

var _ scm.CommentWriter = (*Client)(nil)

// UpsertComment implements scm.CommentWriter with scm.StickyComments on a merge request's notes:
// sluice's own are the notes of the token's user (a project or group access token's bot).
func (c *Client) UpsertComment(ctx context.Context, number int, key, body string) (bool, error) {
	return c.comments.Upsert(ctx, commentHost{c}, number, key, body)
}

// commentHost is the Client as scm.StickyComments uses it.
type commentHost struct{ c *Client }

var _ scm.CommentHost = commentHost{}

// Self implements scm.CommentHost: the token's user (GET /user).
func (h commentHost) Self(ctx context.Context) (string, error) {
	u, resp, err := h.c.api.Users.CurrentUser(gl.WithContext(ctx))
	if err != nil {
		return "", mapError(err, resp, "the authenticated user")
	}
	return u.Username, nil
}

// Comments implements scm.CommentHost: the merge request's notes, oldest first, without GitLab's
// system notes (label changes, pushes).
func (h commentHost) Comments(ctx context.Context, number int) ([]scm.Comment, error) {
	c := h.c
	opts := &gl.ListMergeRequestNotesOptions{ListOptions: gl.ListOptions{PerPage: pageSize}, OrderBy: gl.Ptr("created_at"), Sort: gl.Ptr("asc")}
	options := []gl.RequestOptionFunc{gl.WithContext(ctx)}
	var out []scm.Comment
	for page := 0; page < maxPages; page++ {
		list, resp, err := c.api.Notes.ListMergeRequestNotes(c.project, int64(number), opts, options...)
		if err != nil {
			return nil, mapError(err, resp, fmt.Sprintf("the notes of merge request !%d", number))
		}
		for _, n := range list {
			if !n.System {
				out = append(out, commentOf(n))
			}
		}
		next, more := gl.WithNext(resp)
		if !more {
			break
		}
		options = []gl.RequestOptionFunc{gl.WithContext(ctx), next}
	}
	return out, nil
}

// CreateComment implements scm.CommentHost.
func (h commentHost) CreateComment(ctx context.Context, number int, body string) (scm.Comment, error) {
	c := h.c
	n, resp, err := c.api.Notes.CreateMergeRequestNote(c.project, int64(number), &gl.CreateMergeRequestNoteOptions{Body: gl.Ptr(body)}, gl.WithContext(ctx))
	if err != nil {
		return scm.Comment{}, mapError(err, resp, fmt.Sprintf("commenting on merge request !%d", number))
	}
	return commentOf(n), nil
}

// EditComment implements scm.CommentHost.
func (h commentHost) EditComment(ctx context.Context, number int, id int64, body string) (scm.Comment, error) {
	c := h.c
	n, resp, err := c.api.Notes.UpdateMergeRequestNote(c.project, int64(number), id, &gl.UpdateMergeRequestNoteOptions{Body: gl.Ptr(body)}, gl.WithContext(ctx))
	if err != nil {
		return scm.Comment{}, mapError(err, resp, fmt.Sprintf("editing note %d of merge request !%d", id, number))
	}
	return commentOf(n), nil
}

func commentOf(n *gl.Note) scm.Comment {
	out := scm.Comment{ID: n.ID, Author: n.Author.Username, Body: n.Body}
	if n.CreatedAt != nil {
		out.CreatedAt, out.UpdatedAt = *n.CreatedAt, *n.CreatedAt
	}
	if n.UpdatedAt != nil && n.UpdatedAt.After(out.CreatedAt) {
		out.UpdatedAt = *n.UpdatedAt
	}
	return out
}
