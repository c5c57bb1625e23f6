package gitea

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	sdk "code.gitea.io/sdk/gitea"
)

// TeamMember implements scm.TeamReader. Gitea addresses teams by id: the team named slug (team
// names are unique in an organisation, case-insensitively, and Gitea allows no spaces in them,
// so a name is its own slug) is found with GET /orgs/{org}/teams/search, then the user with GET
// /teams/{id}/members/{user}. Gitea teams have no child teams and no pending memberships. A team
// or organisation the token cannot see (its user must belong to the organisation, and to the
// team or own the organisation; the token needs read:organization) answers 403 or 404: false.
func (c *Client) TeamMember(ctx context.Context, org, slug, user string) (bool, error) {
	what := "membership of user " + user + " in team " + org + "/" + slug
	if !validName(org) || !validName(slug) {
		return false, fmt.Errorf("%s: %q/%q is not an organisation and team name", what, org, slug)
	}
	api := c.api(ctx)
	var id int64
	for page := 1; page <= maxPages && id == 0; page++ {
		teams, resp, err := api.SearchOrgTeams(url.PathEscape(org), &sdk.SearchTeamsOptions{
			ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize}, Query: slug,
		})
		if invisible(statusOf(resp)) {
			return false, nil
		}
		if err != nil {
			return false, c.mapError(err, resp, what)
		}
		for _, t := range teams {
			if strings.EqualFold(t.Name, slug) {
				id = t.ID
				break
			}
		}
		if len(teams) < pageSize {
			break
		}
	}
	if id == 0 {
		return false, nil
	}
	_, resp, err := api.GetTeamMember(id, user)
	if invisible(statusOf(resp)) {
		return false, nil
	}
	if err != nil {
		return false, c.mapError(err, resp, what)
	}
	return true, nil
}

// invisible tells the answers that mean "not a member, as far as the token can see".
func invisible(status int) bool {
	return status == http.StatusNotFound || status == http.StatusForbidden
}

// validName tells whether s can be a Gitea user, organisation or team name in a path: no
// separators, no dots-only segment.
func validName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/?#%\\ \t\r\n")
}
