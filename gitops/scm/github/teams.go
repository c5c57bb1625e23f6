package github

import (
	"context"
	"net/http"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// TeamMember implements scm.TeamReader with GET /orgs/{org}/teams/{team_slug}/memberships/{username}.
// GitHub answers 404 both for a user outside the team and for a team the token cannot see
// (it needs the organisation's members:read permission): both are false.
func (c *Client) TeamMember(ctx context.Context, org, slug, user string) (bool, error) {
	m, resp, err := c.gh.Teams.GetTeamMembershipBySlug(ctx, org, slug, user)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, mapError(err, resp, "membership of user "+user+" in team "+org+"/"+slug, c.now())
	}
	return m.GetState() == "active", nil
}

var _ scm.TeamReader = (*Client)(nil)
