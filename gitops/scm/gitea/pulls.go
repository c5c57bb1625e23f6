package gitea

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// fallbackPages bounds the scan of closed pull requests for a merge commit on a server without
// GET /repos/{owner}/{repo}/commits/{sha}/pull: the most recently updated ones come first, and
// a release follows its merge closely.
const fallbackPages = 2

// PullRequestsForCommit implements scm.PullRequestReader: the merged pull request whose merge
// commit is sha (GET /repos/{owner}/{repo}/commits/{sha}/pull, or a scan of the recently closed
// pull requests on servers without it), then the open pull requests whose head is sha. Gitea
// has no listing of every pull request that contains a commit.
func (c *Client) PullRequestsForCommit(ctx context.Context, sha string) ([]scm.PullRequest, error) {
	var out []scm.PullRequest
	merged, ok, err := c.mergedPullRequest(ctx, sha)
	if err != nil {
		return nil, err
	}
	if ok {
		out = append(out, merged)
	}
	api := c.api(ctx)
	for page := 1; page <= maxPages; page++ {
		list, resp, err := api.ListRepoPullRequests(c.owner, c.repo, sdk.ListPullRequestsOptions{
			ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize}, State: sdk.StateOpen,
		})
		if err != nil {
			return nil, c.mapError(err, resp, "open pull requests")
		}
		for _, pr := range list {
			if pr.Head != nil && pr.Head.Sha == sha {
				out = append(out, pullRequest(pr))
			}
		}
		if len(list) < pageSize {
			break
		}
	}
	return out, nil
}

// mergedPullRequest finds the pull request merged as sha.
func (c *Client) mergedPullRequest(ctx context.Context, sha string) (scm.PullRequest, bool, error) {
	pr, resp, err := c.api(ctx).GetCommitPullRequest(c.owner, c.repo, sha)
	switch {
	case err == nil:
		c.setCommitPull()
		return pullRequest(pr), true, nil
	case statusOf(resp) != 404:
		return scm.PullRequest{}, false, c.mapError(err, resp, "the pull request of commit "+sha)
	case c.hasCommitPull() || strings.Contains(strings.ToLower(err.Error()), "pull request does not exist"):
		// The endpoint exists and knows no pull request merged as sha.
		c.setCommitPull()
		return scm.PullRequest{}, false, nil
	}
	api := c.api(ctx)
	for page := 1; page <= fallbackPages; page++ {
		list, resp, err := api.ListRepoPullRequests(c.owner, c.repo, sdk.ListPullRequestsOptions{
			ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize}, State: sdk.StateClosed, Sort: "recentupdate",
		})
		if err != nil {
			return scm.PullRequest{}, false, c.mapError(err, resp, "closed pull requests")
		}
		for _, pr := range list {
			if pr.HasMerged && pr.MergedCommitID != nil && *pr.MergedCommitID == sha {
				return pullRequest(pr), true, nil
			}
		}
		if len(list) < pageSize {
			break
		}
	}
	return scm.PullRequest{}, false, nil
}

func (c *Client) setCommitPull() {
	c.commitPullMu.Lock()
	defer c.commitPullMu.Unlock()
	c.commitPull = true
}

func (c *Client) hasCommitPull() bool {
	c.commitPullMu.Lock()
	defer c.commitPullMu.Unlock()
	return c.commitPull
}

// PullRequest implements scm.PullRequestReader.
func (c *Client) PullRequest(ctx context.Context, number int) (scm.PullRequest, error) {
	pr, resp, err := c.api(ctx).GetPullRequest(c.owner, c.repo, int64(number))
	if err != nil {
		return scm.PullRequest{}, c.mapError(err, resp, fmt.Sprintf("pull request #%d", number))
	}
	return pullRequest(pr), nil
}

// timelineComment is an entry of an issue's timeline, reduced to what Labels reads. The SDK's
// TimelineComment declares "label" as a list, but Gitea sends one object, which fails the SDK's
// decoding of any timeline with a label change.
type timelineComment struct {
	ID      int64      `json:"id"`
	Type    string     `json:"type"`
	Body    string     `json:"body"`
	Poster  *sdk.User  `json:"user"`
	Created time.Time  `json:"created_at"`
	Label   *sdk.Label `json:"label"`
}

// labelEvent is a label added to or removed from a pull request.
type labelEvent struct {
	ID    int64
	Added bool
	Label string
	Actor string
	At    time.Time
}

// Labels implements scm.PullRequestReader: the labels the pull request has now, each attributed
// to the latest timeline entry that added it. Gitea records a label change as a timeline entry
// of type "label" whose body is "1" when the label was added and empty when it was removed. A
// label with no such entry (its history lost) has an empty AddedBy, which no approval policy
// should accept.
func (c *Client) Labels(ctx context.Context, number int) ([]scm.AppliedLabel, error) {
	pr, err := c.PullRequest(ctx, number)
	if err != nil {
		return nil, err
	}
	var events []labelEvent
	path := c.repoPath() + "/issues/" + strconv.Itoa(number) + "/timeline"
	for page := 1; page <= maxPages; page++ {
		var list []timelineComment
		query := url.Values{"page": {strconv.Itoa(page)}, "limit": {strconv.Itoa(pageSize)}}
		resp, err := c.getJSON(ctx, path, query, &list)
		if err != nil {
			return nil, c.mapError(err, resp, fmt.Sprintf("timeline of pull request #%d", number))
		}
		for _, e := range list {
			if e.Type != "label" || e.Label == nil || e.Poster == nil {
				continue
			}
			events = append(events, labelEvent{ID: e.ID, Added: e.Body == "1", Label: e.Label.Name, Actor: e.Poster.UserName, At: e.Created})
		}
		if len(list) < pageSize {
			break
		}
	}
	return attribute(pr.Labels, events), nil
}

// attribute gives each label in current (the pull request's labels now) the actor and time of
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

// pullRequest converts the SDK's pull request.
func pullRequest(pr *sdk.PullRequest) scm.PullRequest {
	out := scm.PullRequest{
		Number: int(pr.Index),
		Title:  pr.Title,
		State:  string(pr.State),
		Merged: pr.HasMerged,
		URL:    pr.HTMLURL,
	}
	if pr.HasMerged && pr.MergedCommitID != nil {
		out.MergeCommitSHA = *pr.MergedCommitID
	}
	if pr.Head != nil {
		out.HeadSHA, out.HeadRef = pr.Head.Sha, pr.Head.Ref
	}
	if pr.Base != nil {
		out.BaseRef = pr.Base.Ref
	}
	if pr.Poster != nil {
		out.Author = pr.Poster.UserName
	}
	for _, l := range pr.Labels {
		out.Labels = append(out.Labels, l.Name)
	}
	return out
}
