package gitlab

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// Pagination of listings.
const (
	pageSize = 100
	// maxPages bounds every paginated listing.
	maxPages = 20
)

// PullRequestsForCommit implements scm.PullRequestReader with GET
// /projects/:id/repository/commits/:sha/merge_requests: the merge requests GitLab relates to the
// commit (the one merged or squashed as it, and those that bring it), the ones whose merge or
// squash commit is sha first, then in GitLab's order (newest first).
func (c *Client) PullRequestsForCommit(ctx context.Context, sha string) ([]scm.PullRequest, error) {
	var exact, others []scm.PullRequest
	options := []gl.RequestOptionFunc{gl.WithContext(ctx), perPage(pageSize)}
	for page := 0; page < maxPages; page++ {
		list, resp, err := c.api.Commits.ListMergeRequestsByCommit(c.project, sha, options...)
		if err != nil {
			return nil, mapError(err, resp, "the merge requests of commit "+sha)
		}
		for _, mr := range list {
			pr := pullRequest(mr)
			if mr.MergeCommitSHA == sha || mr.SquashCommitSHA == sha {
				exact = append(exact, pr)
			} else {
				others = append(others, pr)
			}
		}
		next, more := gl.WithNext(resp)
		if !more {
			break
		}
		options = []gl.RequestOptionFunc{gl.WithContext(ctx), perPage(pageSize), next}
	}
	return append(exact, others...), nil
}

// PullRequest implements scm.PullRequestReader: the merge request of iid number.
func (c *Client) PullRequest(ctx context.Context, number int) (scm.PullRequest, error) {
	mr, resp, err := c.api.MergeRequests.GetMergeRequest(c.project, int64(number), nil, gl.WithContext(ctx))
	if err != nil {
		return scm.PullRequest{}, mapError(err, resp, fmt.Sprintf("merge request !%d", number))
	}
	return pullRequest(&mr.BasicMergeRequest), nil
}

// labelEvent is a label added to or removed from a merge request.
type labelEvent struct {
	ID    int64
	Added bool
	Label string
	Actor string
	At    time.Time
}

// Labels implements scm.PullRequestReader: the labels the merge request has now, each attributed
// to the latest resource label event that added it (GET
// /projects/:id/merge_requests/:iid/resource_label_events, every page). GitLab records one
// event per label added or removed, with its user and time; a label with no event (added before
// GitLab recorded them, or its event's label deleted since) has an empty AddedBy, which no
// approval policy should accept.
func (c *Client) Labels(ctx context.Context, number int) ([]scm.AppliedLabel, error) {
	pr, err := c.PullRequest(ctx, number)
	if err != nil {
		return nil, err
	}
	var events []labelEvent
	opt := &gl.ListLabelEventsOptions{ListOptions: gl.ListOptions{PerPage: pageSize}}
	options := []gl.RequestOptionFunc{gl.WithContext(ctx)}
	for page := 0; page < maxPages; page++ {
		list, resp, err := c.api.ResourceLabelEvents.ListMergeRequestsLabelEvents(c.project, int64(number), opt, options...)
		if err != nil {
			return nil, mapError(err, resp, fmt.Sprintf("label events of merge request !%d", number))
		}
		for _, e := range list {
			if e.Label.Name == "" || e.User.Username == "" || e.CreatedAt == nil || e.Action != "add" && e.Action != "remove" {
				continue
			}
			events = append(events, labelEvent{ID: e.ID, Added: e.Action == "add", Label: e.Label.Name, Actor: e.User.Username, At: *e.CreatedAt})
		}
		next, more := gl.WithNext(resp)
		if !more {
			break
		}
		options = []gl.RequestOptionFunc{gl.WithContext(ctx), next}
	}
	return attribute(pr.Labels, events), nil
}

// attribute gives each label in current (the merge request's labels now) the actor and time of
// the last event that added it, replaying the events in order (time, then id). Names compare
// case-insensitively. The result follows the order of current.
func attribute(current []string, events []labelEvent) []scm.AppliedLabel {
	ordered := append([]labelEvent(nil), events...)
	sort.SliceStable(ordered, func(i, j int) bool {
		if !ordered[i].At.Equal(ordered[j].At) {
			return ordered[i].At.Before(ordered[j].At)
		}
		return ordered[i].ID < ordered[j].ID
	})
	last := map[string]labelEvent{}
	for _, e := range ordered {
		if e.Added {
			last[strings.ToLower(e.Label)] = e
		} else {
			delete(last, strings.ToLower(e.Label))
		}
	}
	out := make([]scm.AppliedLabel, 0, len(current))
	for _, name := range current {
		l := scm.AppliedLabel{Name: name}
		if e, ok := last[strings.ToLower(name)]; ok {
			l.AddedBy, l.AddedAt = e.Actor, e.At
		}
		out = append(out, l)
	}
	return out
}

// pullRequest converts a merge request. GitLab's states are opened, closed, locked and merged;
// sluice's are open and closed, with Merged. The commit a merge left on the target branch is
// the merge commit, else the squash commit (a squash with fast-forward), else the head (a
// fast-forward merge moves the target to it).
func pullRequest(mr *gl.BasicMergeRequest) scm.PullRequest {
	out := scm.PullRequest{
		Number:  int(mr.IID),
		Title:   mr.Title,
		State:   "closed",
		Merged:  mr.State == "merged",
		HeadSHA: mr.SHA,
		HeadRef: mr.SourceBranch,
		BaseRef: mr.TargetBranch,
		URL:     mr.WebURL,
		Labels:  append([]string(nil), mr.Labels...),
	}
	if mr.State == "opened" || mr.State == "locked" {
		out.State = "open"
	}
	if out.Merged {
		switch {
		case mr.MergeCommitSHA != "":
			out.MergeCommitSHA = mr.MergeCommitSHA
		case mr.SquashCommitSHA != "":
			out.MergeCommitSHA = mr.SquashCommitSHA
		default:
			out.MergeCommitSHA = mr.SHA
		}
	}
	if mr.Author != nil {
		out.Author = mr.Author.Username
	}
	return out
}
