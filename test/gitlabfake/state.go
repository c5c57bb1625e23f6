package gitlabfake

import (
	"strings"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// user is a GitLab user.
type user struct {
	id       int64
	username string
	name     string
	email    string
	state    string // active, blocked
}

// member is a membership of a group or project.
type member struct {
	level gitlab.AccessLevelValue
	since time.Time
}

// group is a group or subgroup, by its full path.
type group struct {
	id       int64
	path     string // full path, e.g. "acme/platform"
	parent   *group
	public   bool
	members  map[int64]*member
	sharedTo map[int64]gitlab.AccessLevelValue // groups this one is shared with (invited), by id: their members get at most this level
}

// project is a GitLab project.
type project struct {
	id        int64
	path      string // path with namespace, e.g. "acme/app"
	namespace *group // nil for a project in a user's namespace
	owner     *user  // the user of a personal namespace
	public    bool
	members   map[int64]*member
	repo      *repository
	mrs       []*mergeRequest
	pipelines []*pipeline
	statuses  []*commitStatus
}

// User is a user the test created.
type User struct {
	// ID is the user's numeric id.
	ID int64
	// Username is the user's login.
	Username string
	// Token is a personal access token of the user, accepted as PRIVATE-TOKEN.
	Token string
}

// AddUser creates an active user with a personal access token ("glpat-<username>").
func (s *Server) AddUser(username string) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := &user{id: s.newID(), username: username, name: strings.ToUpper(username[:1]) + username[1:], email: username + "@example.com", state: "active"}
	s.users[u.id] = u
	token := "glpat-" + username
	s.tokens[token] = u.id
	return User{ID: u.id, Username: username, Token: token}
}

// BlockUser blocks a user: their token is refused and their memberships read as blocked.
func (s *Server) BlockUser(username string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustUser(username).state = "blocked"
}

// AddGroup creates a private group at the full path, and the parent groups it lacks.
func (s *Server) AddGroup(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureGroup(path)
}

// AddGroupMember makes username a direct member of the group with level.
func (s *Server) AddGroupMember(path, username string, level gitlab.AccessLevelValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustGroup(path).members[s.mustUser(username).id] = &member{level: level, since: s.now()}
}

// ShareGroup invites the group invited into the group path with at most level: its members
// become members of path (GitLab's group sharing).
func (s *Server) ShareGroup(path, invited string, level gitlab.AccessLevelValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustGroup(path).sharedTo[s.mustGroup(invited).id] = level
}

// AddProjectMember makes username a direct member of the project with level.
func (s *Server) AddProjectMember(path, username string, level gitlab.AccessLevelValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustProject(path).members[s.mustUser(username).id] = &member{level: level, since: s.now()}
}

// CreateProject creates a private project at path ("namespace/name"; the namespace is a group,
// created if missing, or a user's) with one commit on defaultBranch holding files, authored by
// author. It returns the project's id and the commit.
func (s *Server) CreateProject(path, defaultBranch string, files map[string]string, author string) (int64, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns, ok := cutLast(path)
	if !ok {
		panic("gitlabfake: a project path needs a namespace: " + path)
	}
	p := &project{id: s.newID(), path: path, members: map[int64]*member{}, repo: newRepository(defaultBranch)}
	if u := s.userByName(ns); u != nil {
		p.owner = u
		p.members[u.id] = &member{level: gitlab.OwnerPermissions, since: s.now()}
	} else {
		p.namespace = s.ensureGroup(ns)
	}
	a := s.mustUser(author)
	sha := p.repo.commit(defaultBranch, nil, files, nil, "Initial commit", signature(a, s.now()))
	s.projects[p.id] = p
	return p.id, sha
}

// cutLast returns the namespace of a path (all but its last segment); ok is false without one.
func cutLast(path string) (namespace string, ok bool) {
	i := strings.LastIndex(path, "/")
	if i <= 0 || i == len(path)-1 {
		return "", false
	}
	return path[:i], true
}

func (s *Server) ensureGroup(path string) *group {
	if g := s.groups[strings.ToLower(path)]; g != nil {
		return g
	}
	g := &group{id: s.newID(), path: path, members: map[int64]*member{}, sharedTo: map[int64]gitlab.AccessLevelValue{}}
	if parent, ok := cutLast(path); ok {
		g.parent = s.ensureGroup(parent)
	}
	s.groups[strings.ToLower(path)] = g
	return g
}

func (s *Server) userByName(username string) *user {
	for _, u := range s.users {
		if strings.EqualFold(u.username, username) {
			return u
		}
	}
	return nil
}

func (s *Server) mustUser(username string) *user {
	u := s.userByName(username)
	if u == nil {
		panic("gitlabfake: no user " + username)
	}
	return u
}

func (s *Server) mustGroup(path string) *group {
	g := s.groups[strings.ToLower(path)]
	if g == nil {
		panic("gitlabfake: no group " + path)
	}
	return g
}

func (s *Server) projectByPath(path string) *project {
	for _, p := range s.projects {
		if strings.EqualFold(p.path, path) {
			return p
		}
	}
	return nil
}

func (s *Server) mustProject(path string) *project {
	p := s.projectByPath(path)
	if p == nil {
		panic("gitlabfake: no project " + path)
	}
	return p
}

// groupLevel is a user's effective membership of g: direct, inherited from an ancestor, or
// through a group g is shared with (capped at the share's level); the highest wins. ok is false
// for no membership.
func (s *Server) groupLevel(g *group, u *user, depth int) (member, bool) {
	var best member
	found := false
	consider := func(m member) {
		if !found || m.level > best.level {
			best, found = m, true
		}
	}
	for at := g; at != nil; at = at.parent {
		if m := at.members[u.id]; m != nil {
			consider(*m)
		}
		if depth > 3 {
			continue
		}
		for id, maxLevel := range at.sharedTo {
			invited := s.groupByID(id)
			if invited == nil {
				continue
			}
			if m, ok := s.groupLevel(invited, u, depth+1); ok {
				m.level = min(m.level, maxLevel)
				consider(m)
			}
		}
	}
	return best, found
}

func (s *Server) groupByID(id int64) *group {
	for _, g := range s.groups {
		if g.id == id {
			return g
		}
	}
	return nil
}

// projectLevel is a user's effective membership of p: direct or through its namespace's groups.
func (s *Server) projectLevel(p *project, u *user) (member, bool) {
	var best member
	found := false
	if m := p.members[u.id]; m != nil {
		best, found = *m, true
	}
	if p.namespace != nil {
		if m, ok := s.groupLevel(p.namespace, u, 0); ok && (!found || m.level > best.level) {
			best, found = m, true
		}
	}
	return best, found
}

// access is the access level a user acts with on p: none for a blocked user.
func (s *Server) access(p *project, u *user) gitlab.AccessLevelValue {
	m, ok := s.projectLevel(p, u)
	if !ok || u.state != "active" {
		return gitlab.NoPermissions
	}
	return m.level
}

// findProject resolves the :id parameter (a numeric id or a URL-encoded path) to a project the
// user may see, as GitLab answers 404 "Project Not Found" for one it may not.
func (s *Server) findProject(c *call) (*project, error) {
	id := c.params["id"]
	var p *project
	if n, ok := parseInt(id); ok {
		p = s.projects[n]
	} else {
		p = s.projectByPath(id)
	}
	if p == nil || !p.public && s.access(p, c.user) < gitlab.GuestPermissions {
		return nil, notFound("Project")
	}
	return p, nil
}

// need answers 403 unless the user has at least level on p.
func (s *Server) need(c *call, p *project, level gitlab.AccessLevelValue) error {
	if s.access(p, c.user) < level {
		return fail(403, "403 Forbidden")
	}
	return nil
}

// basicUser is the client-go BasicUser of u.
func (s *Server) basicUser(u *user) *gitlab.BasicUser {
	return &gitlab.BasicUser{ID: u.id, Username: u.username, Name: u.name, State: u.state, WebURL: s.URL + "/" + u.username}
}
