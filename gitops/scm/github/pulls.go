package github

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	gh "github.com/google/go-github/v56/github"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// maxPages bounds every paginated listing (100 items a page).
const maxPages = 20

// PullRequestsForCommit implements scm.PullRequestReader.
func (c *Client) PullRequestsForCommit(ctx context.Context, sha string) ([]scm.PullRequest, error) {
	var out []scm.PullRequest
	opts := &gh.ListOptions{PerPage: 100}
	for page := 0; page < maxPages; page++ {
		list, resp, err := c.gh.PullRequests.ListPullRequestsWithCommit(ctx, c.owner, c.repo, sha, opts)
		if err != nil {
			return nil, mapError(err, resp, "pull requests of commit "+sha, c.now())
		}
		for _, pr := range list {
			out = append(out, pullRequest(pr))
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// PullRequest implements scm.PullRequestReader.
func (c *Client) PullRequest(ctx context.Context, number int) (scm.PullRequest, error) {
	pr, resp, err := c.gh.PullRequests.Get(ctx, c.owner, c.repo, number)
	if err != nil {
		return scm.PullRequest{}, mapError(err, resp, fmt.Sprintf("pull request #%d", number), c.now())
	}
	return pullRequest(pr), nil
}

// Labels implements scm.PullRequestReader: the labels the pull request has now, each attributed
// to the latest "labeled" event of its name. A label with no such event (its history lost) is
// returned with an empty AddedBy, which no approval policy should accept.
func (c *Client) Labels(ctx context.Context, number int) ([]scm.AppliedLabel, error) {
	pr, err := c.PullRequest(ctx, number)
	if err != nil {
		return nil, err
	}
	var events []labelEvent
	opts := &gh.ListOptions{PerPage: 100}
	for page := 0; page < maxPages; page++ {
		list, resp, err := c.gh.Issues.ListIssueEvents(ctx, c.owner, c.repo, number, opts)
		if err != nil {
			return nil, mapError(err, resp, fmt.Sprintf("events of pull request #%d", number), c.now())
		}
		for _, e := range list {
			if e.GetEvent() != "labeled" && e.GetEvent() != "unlabeled" {
				continue
			}
			events = append(events, labelEvent{
				ID:    e.GetID(),
				Added: e.GetEvent() == "labeled",
				Label: e.GetLabel().GetName(),
				Actor: e.GetActor().GetLogin(),
				At:    e.GetCreatedAt().Time,
			})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return currentLabels(pr.Labels, events), nil
}

// labelEvent is a label added to or removed from a pull request.
type labelEvent struct {
	ID    int64
	Added bool
	Label string
	Actor string
	At    time.Time
}

// currentLabels attributes each label in current (the pull request's labels now) to the last
// event that added it, replaying events in time order. Label names compare case-insensitively,
// as GitHub's do. The result follows the order of current.
func currentLabels(current []string, events []labelEvent) []scm.AppliedLabel {
	sorted := append([]labelEvent(nil), events...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if !sorted[i].At.Equal(sorted[j].At) {
			return sorted[i].At.Before(sorted[j].At)
		}
		return sorted[i].ID < sorted[j].ID
	})
	added := map[string]labelEvent{}
	for _, e := range sorted {
		key := strings.ToLower(e.Label)
		if e.Added {
			added[key] = e
		} else {
			delete(added, key)
		}
	}
	out := make([]scm.AppliedLabel, 0, len(current))
	for _, name := range current {
		l := scm.AppliedLabel{Name: name}
		if e, ok := added[strings.ToLower(name)]; ok {
			l.AddedBy, l.AddedAt = e.Actor, e.At
		}
		out = append(out, l)
	}
	return out
}

// pullRequest converts go-github's pull request.
func pullRequest(pr *gh.PullRequest) scm.PullRequest {
	out := scm.PullRequest{
		Number:         pr.GetNumber(),
		Title:          pr.GetTitle(),
		State:          pr.GetState(),
		Merged:         pr.GetMerged() || pr.MergedAt != nil,
		MergeCommitSHA: pr.GetMergeCommitSHA(),
		HeadSHA:        pr.GetHead().GetSHA(),
		HeadRef:        pr.GetHead().GetRef(),
		BaseRef:        pr.GetBase().GetRef(),
		Author:         pr.GetUser().GetLogin(),
		URL:            pr.GetHTMLURL(),
	}
	for _, l := range pr.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	if !out.Merged {
		// GitHub fills merge_commit_sha with a test merge for open pull requests.
		out.MergeCommitSHA = ""
	}
	return out
}
