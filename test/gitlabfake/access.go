package gitlabfake

import (
	"net/http"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// listUsers serves GET /users with the username filter (case-insensitive, as GitLab matches)
// and search (see searchUsers).
func (s *Server) listUsers(c *call) (reply, error) {
	name, search := c.query.Get("username"), c.query.Get("search")
	list := []*gitlab.User{}
	for _, id := range sortedIDs(s.users) {
		u := s.users[id]
		if name != "" && !strings.EqualFold(u.username, name) || search != "" && !searchUsers(u, search) {
			continue
		}
		list = append(list, &gitlab.User{ID: u.id, Username: u.username, Name: u.name, State: u.state, WebURL: s.URL + "/" + u.username})
	}
	from, to := paginate(c, len(list))
	return reply{status: http.StatusOK, value: list[from:to]}, nil
}

// getProject serves GET /projects/:id.
func (s *Server) getProject(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	out := &gitlab.Project{
		ID: p.id, Name: lastSegment(p.path), Path: lastSegment(p.path), PathWithNamespace: p.path,
		NameWithNamespace: strings.ReplaceAll(p.path, "/", " / "), DefaultBranch: p.repo.defaultBranch,
		Visibility: gitlab.PrivateVisibility, WebURL: s.URL + "/" + p.path, HTTPURLToRepo: s.URL + "/" + p.path + ".git",
	}
	if p.public {
		out.Visibility = gitlab.PublicVisibility
	}
	ns := &gitlab.ProjectNamespace{Path: namespaceOf(p.path), FullPath: namespaceOf(p.path), Name: namespaceOf(p.path), Kind: "user"}
	if p.namespace != nil {
		ns.ID, ns.Kind, ns.WebURL = p.namespace.id, "group", s.URL+"/groups/"+p.namespace.path
		if p.namespace.parent != nil {
			ns.ParentID = p.namespace.parent.id
		}
	} else {
		ns.ID = p.owner.id
	}
	out.Namespace = ns
	return reply{status: http.StatusOK, value: out}, nil
}

// projectMember serves GET /projects/:id/members/all/:user_id: the user's effective membership
// (direct, inherited from the project's groups, or through a group they are shared with).
func (s *Server) projectMember(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	u, err := s.findUserID(c)
	if err != nil {
		return reply{}, err
	}
	m, ok := s.projectLevel(p, u)
	if !ok {
		return reply{}, &apiError{status: http.StatusNotFound, message: "404 Not found"}
	}
	since := m.since
	return reply{status: http.StatusOK, value: &gitlab.ProjectMember{
		ID: u.id, Username: u.username, Name: u.name, State: u.state, CreatedAt: &since, AccessLevel: m.level,
		WebURL: s.URL + "/" + u.username,
	}}, nil
}

// groupMember serves GET /groups/:id/members/all/:user_id. A private group is visible to its
// members, its ancestors' and its descendants' (GitLab answers 404 "Group Not Found" otherwise).
func (s *Server) groupMember(c *call) (reply, error) {
	g := s.groups[strings.ToLower(c.params["id"])]
	if n, ok := parseInt(c.params["id"]); ok {
		g = s.groupByID(n)
	}
	if g == nil || !g.public && !s.seesGroup(g, c.user) {
		return reply{}, notFound("Group")
	}
	u, err := s.findUserID(c)
	if err != nil {
		return reply{}, err
	}
	m, ok := s.groupLevel(g, u, 0)
	if !ok {
		return reply{}, &apiError{status: http.StatusNotFound, message: "404 Not found"}
	}
	since := m.since
	return reply{status: http.StatusOK, value: &gitlab.GroupMember{
		ID: u.id, Username: u.username, Name: u.name, State: u.state, CreatedAt: &since, AccessLevel: m.level,
		WebURL: s.URL + "/" + u.username,
	}}, nil
}

func (s *Server) seesGroup(g *group, u *user) bool {
	if _, ok := s.groupLevel(g, u, 0); ok {
		return true
	}
	for _, other := range s.groups {
		for at := other.parent; at != nil; at = at.parent {
			if at == g && other.members[u.id] != nil {
				return true
			}
		}
	}
	return false
}

func (s *Server) findUserID(c *call) (*user, error) {
	id, ok := parseInt(c.params["user_id"])
	if !ok || s.users[id] == nil {
		return nil, &apiError{status: http.StatusNotFound, message: "404 Not found"}
	}
	return s.users[id], nil
}

func sortedIDs[T any](m map[int64]T) []int64 {
	out := make([]int64, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
