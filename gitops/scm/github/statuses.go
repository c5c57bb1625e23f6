package github

import (
	"context"
	"strings"

	gh "github.com/google/go-github/v56/github"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// maxStatusPages bounds the listing of a commit's statuses: GitHub keeps at most 1000 per
// (commit, context), and the newest come first.
const maxStatusPages = 10

// SetStatus implements scm.CommitStatusWriter. Calls are serialised, so two callers never post
// the same status twice. A failed post is forgotten: the next call for that (sha, context) lists
// the commit's statuses again before posting, in case the failed post was applied after all.
func (c *Client) SetStatus(ctx context.Context, sha string, status scm.CommitStatus) (bool, error) {
	status, err := status.Validate()
	if err != nil {
		return false, err
	}
	c.statusMu.Lock()
	defer c.statusMu.Unlock()
	last, known := c.statuses.Get(sha, status.Context)
	if !known {
		if last, known, err = c.latestStatus(ctx, sha, status.Context); err != nil {
			return false, err
		}
		if known {
			c.statuses.Put(sha, last)
		}
	}
	if known && last.Same(status) {
		return false, nil
	}
	_, resp, err := c.gh.Repositories.CreateStatus(ctx, c.owner, c.repo, sha, &gh.RepoStatus{
		State:       gh.String(string(status.State)),
		Description: gh.String(status.Description),
		TargetURL:   optional(status.TargetURL),
		Context:     gh.String(status.Context),
	})
	if err != nil {
		c.statuses.Forget(sha, status.Context)
		return false, mapError(err, resp, "creating the status of commit "+sha, c.now())
	}
	c.statuses.Put(sha, status)
	return true, nil
}

// latestStatus finds the newest status of statusContext on sha.
func (c *Client) latestStatus(ctx context.Context, sha, statusContext string) (scm.CommitStatus, bool, error) {
	opts := &gh.ListOptions{PerPage: 100}
	for page := 0; page < maxStatusPages; page++ {
		list, resp, err := c.gh.Repositories.ListStatuses(ctx, c.owner, c.repo, sha, opts)
		if err != nil {
			return scm.CommitStatus{}, false, mapError(err, resp, "listing the statuses of commit "+sha, c.now())
		}
		for _, s := range list {
			if strings.EqualFold(s.GetContext(), statusContext) {
				return scm.CommitStatus{
					Context:     s.GetContext(),
					State:       scm.CommitState(s.GetState()),
					Description: s.GetDescription(),
					TargetURL:   s.GetTargetURL(),
				}, true, nil
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return scm.CommitStatus{}, false, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
