package gitea

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// Pagination of listings: Gitea's default MAX_RESPONSE_ITEMS is 50.
const (
	pageSize = 50
	// maxPages bounds every paginated listing.
	maxPages = 20
)

// SetStatus implements scm.CommitStatusWriter. Calls are serialised, so two callers never post
// the same status twice. A failed post is forgotten: the next call for that (sha, context) reads
// the commit's statuses again before posting, in case the failed post was applied after all.
//
// Gitea trims a status's context and description; they are trimmed here too, so that what is
// remembered is what the server shows.
func (c *Client) SetStatus(ctx context.Context, sha string, status scm.CommitStatus) (bool, error) {
	status, err := status.Validate()
	if err != nil {
		return false, err
	}
	status.Context = strings.TrimSpace(status.Context)
	status.Description = strings.TrimSpace(status.Description)
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
	_, resp, err := c.api(ctx).CreateStatus(c.owner, c.repo, sha, sdk.CreateStatusOption{
		State:       sdk.StatusState(status.State),
		TargetURL:   status.TargetURL,
		Description: status.Description,
		Context:     status.Context,
	})
	if err != nil {
		c.statuses.Forget(sha, status.Context)
		return false, c.mapError(err, resp, "creating the status of commit "+sha)
	}
	c.statuses.Put(sha, status)
	return true, nil
}

// latestStatus finds the newest status of statusContext on sha in the commit's combined status,
// which holds the latest status of each context. The SDK's GetCombinedStatus reads only its
// first page, so the pages are read here.
func (c *Client) latestStatus(ctx context.Context, sha, statusContext string) (scm.CommitStatus, bool, error) {
	for page := 1; page <= maxPages; page++ {
		var combined sdk.CombinedStatus
		query := url.Values{"page": {strconv.Itoa(page)}, "limit": {strconv.Itoa(pageSize)}}
		resp, err := c.getJSON(ctx, c.repoPath()+"/commits/"+url.PathEscape(sha)+"/status", query, &combined)
		if err != nil {
			return scm.CommitStatus{}, false, c.mapError(err, resp, "the statuses of commit "+sha)
		}
		for _, s := range combined.Statuses {
			if strings.EqualFold(strings.TrimSpace(s.Context), statusContext) {
				return scm.CommitStatus{
					Context:     s.Context,
					State:       scm.CommitState(s.State),
					Description: s.Description,
					TargetURL:   s.TargetURL,
				}, true, nil
			}
		}
		if len(combined.Statuses) < pageSize {
			break
		}
	}
	return scm.CommitStatus{}, false, nil
}
