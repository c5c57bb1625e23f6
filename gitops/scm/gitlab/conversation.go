package gitlab

import (
	"context"
	"fmt"
	"strings"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// The conversation capabilities a Client implements.
var (
	_ scm.CommentReader      = (*Client)(nil)
	_ scm.ReviewReader       = (*Client)(nil)
	_ scm.CommitAuthorReader = (*Client)(nil)
)

// The bodies of the system notes GitLab writes when someone approves a merge request and takes
// the approval back.
const (
	noteApproved   = "approved this merge request"
	noteUnapproved = "unapproved this merge request"
)

// notes lists every note of a merge request, oldest first (GET
// /projects/:id/merge_requests/:iid/notes?sort=asc&order_by=created_at, every page).
func (c *Client) notes(ctx context.Context, number int) ([]*gl.Note, error) {
	var out []*gl.Note
	opt := &gl.ListMergeRequestNotesOptions{ListOptions: gl.ListOptions{PerPage: pageSize}, OrderBy: gl.Ptr("created_at"), Sort: gl.Ptr("asc")}
	options := []gl.RequestOptionFunc{gl.WithContext(ctx)}
	for page := 0; page < maxPages; page++ {
		list, resp, err := c.api.Notes.ListMergeRequestNotes(c.project, int64(number), opt, options...)
		if err != nil {
			return nil, mapError(err, resp, fmt.Sprintf("notes of merge request !%d", number))
		}
		out = append(out, list...)
		next, more := gl.WithNext(resp)
		if !more {
			break
		}
		options = []gl.RequestOptionFunc{gl.WithContext(ctx), next}
	}
	return out, nil
}

// Comments implements scm.CommentReader: the merge request's notes that people wrote, without
// GitLab's system notes ("approved this merge request", "added 1 commit", label changes).
func (c *Client) Comments(ctx context.Context, number int) ([]scm.Comment, error) {
	return commentHost{c}.Comments(ctx, number)
}

// Reviews implements scm.ReviewReader with GitLab's approvals: the users GET
// /projects/:id/merge_requests/:iid/approvals says approve the merge request now, each as a
// ReviewApproved at the time of their latest "approved this merge request" system note (an
// approval taken back is no longer listed; its time is zero when GitLab kept no note). GitLab
// has no dismissed review; a merged merge request cannot be approved.
func (c *Client) Reviews(ctx context.Context, number int) ([]scm.Review, error) {
	approvals, resp, err := c.api.MergeRequestApprovals.GetConfiguration(c.project, int64(number), gl.WithContext(ctx))
	if err != nil {
		return nil, mapError(err, resp, fmt.Sprintf("approvals of merge request !%d", number))
	}
	if len(approvals.ApprovedBy) == 0 {
		return nil, nil
	}
	notes, err := c.notes(ctx, number)
	if err != nil {
		return nil, err
	}
	approvedAt := map[string]time.Time{}
	for _, n := range notes {
		if n == nil || !n.System || n.CreatedAt == nil || strings.TrimSpace(n.Body) != noteApproved {
			continue
		}
		approvedAt[strings.ToLower(n.Author.Username)] = *n.CreatedAt // oldest first: the last wins
	}
	out := make([]scm.Review, 0, len(approvals.ApprovedBy))
	for _, a := range approvals.ApprovedBy {
		if a == nil || a.User == nil || a.User.Username == "" {
			continue
		}
		out = append(out, scm.Review{Author: a.User.Username, State: scm.ReviewApproved, SubmittedAt: approvedAt[strings.ToLower(a.User.Username)]})
	}
	return out, nil
}

// PullRequestCommits implements scm.CommitAuthorReader with GET
// /projects/:id/merge_requests/:iid/commits (every page). GitLab names a commit's author by
// e-mail only: the account is the one user GET /users?search=<e-mail> finds, which GitLab
// matches against public e-mails (every e-mail for an administrator's token), so an author who
// keeps their address private has no Login.
func (c *Client) PullRequestCommits(ctx context.Context, number int) ([]scm.CommitAuthor, error) {
	var out []scm.CommitAuthor
	opt := &gl.GetMergeRequestCommitsOptions{ListOptions: gl.ListOptions{PerPage: pageSize}}
	options := []gl.RequestOptionFunc{gl.WithContext(ctx)}
	for page := 0; page < maxPages; page++ {
		list, resp, err := c.api.MergeRequests.GetMergeRequestCommits(c.project, int64(number), opt, options...)
		if err != nil {
			return nil, mapError(err, resp, fmt.Sprintf("commits of merge request !%d", number))
		}
		for _, cm := range list {
			if cm == nil {
				continue
			}
			out = append(out, scm.CommitAuthor{SHA: cm.ID, Email: cm.AuthorEmail, Name: cm.AuthorName})
		}
		next, more := gl.WithNext(resp)
		if !more {
			break
		}
		options = []gl.RequestOptionFunc{gl.WithContext(ctx), next}
	}
	// Oldest first, as the other hosts list them (GitLab lists the newest first).
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	for i := range out {
		login, err := c.userOfEmail(ctx, out[i].Email)
		if err != nil {
			return nil, err
		}
		out[i].Login = login
	}
	return out, nil
}

// userOfEmail returns the username of the one user GitLab finds by email ("" for none, or more
// than one), remembering the answers.
func (c *Client) userOfEmail(ctx context.Context, email string) (string, error) {
	if !strings.Contains(email, "@") {
		return "", nil
	}
	key := strings.ToLower(email)
	c.usersMu.Lock()
	login, ok := c.emails[key]
	c.usersMu.Unlock()
	if ok {
		return login, nil
	}
	users, resp, err := c.api.Users.ListUsers(&gl.ListUsersOptions{Search: gl.Ptr(email)}, gl.WithContext(ctx))
	if err != nil {
		return "", mapError(err, resp, "the user of e-mail "+email)
	}
	if len(users) == 1 {
		login = users[0].Username
	}
	c.usersMu.Lock()
	defer c.usersMu.Unlock()
	if c.emails == nil || len(c.emails) >= maxCachedUsers {
		c.emails = map[string]string{}
	}
	c.emails[key] = login
	return login, nil
}
