package githubfake

import (
	"net/http"
	"strings"
)

// The states of a team membership.
const (
	// MembershipActive is a member who accepted the invitation.
	MembershipActive = "active"
	// MembershipPending is an invited user who has not accepted yet.
	MembershipPending = "pending"
)

// SetTeamMembership makes login a member of the team "org/team-slug" in
// state (MembershipActive or MembershipPending); "" removes the membership.
// A team exists once it has had a member.
func (s *Server) SetTeamMembership(team, login, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(team)
	if s.teams == nil {
		s.teams = map[string]map[string]string{}
	}
	if s.teams[key] == nil {
		s.teams[key] = map[string]string{}
	}
	if state == "" {
		delete(s.teams[key], strings.ToLower(login))
		return
	}
	s.teams[key][strings.ToLower(login)] = state
}

// getTeamMembership answers GET /orgs/{org}/teams/{team_slug}/memberships/{username}: 404 when
// the team does not exist or the user is not a member, as GitHub does.
func (s *Server) getTeamMembership(c *call) (int, any, error) {
	org, slug, login := c.params["org"], c.params["team_slug"], c.params["username"]
	members, ok := s.teams[strings.ToLower(org+"/"+slug)]
	if !ok {
		return 0, nil, fail(http.StatusNotFound, "Not Found")
	}
	state, ok := members[strings.ToLower(login)]
	if !ok {
		return 0, nil, fail(http.StatusNotFound, "Not Found")
	}
	return http.StatusOK, map[string]any{
		"role": "member", "state": state,
		"url": s.apiURL("organizations/1/team/1/memberships/%s", login),
	}, nil
}
